#!/usr/bin/env bash
# Times the code of an earlier commit beside the current code on the live-test cluster, in one
# invocation of each live benchmark, run by run (make bench-keygen-before-after; docs/benchmarks.md,
# "The keygen before and after"):
#
#   tests/bench/keygen-before-after.sh COMMIT
#
# It builds minicluster-fn and its image at COMMIT as that commit's Makefile did: `make image` in a
# copy of the commit's tree (git archive), so its build target's go build flags and its podman
# build of its Containerfile. VERSION=before-<commit> gives its keygen Jobs an image name of their
# own, ghcr.io/minicluster-fn/minicluster-fn:before-<commit>, beside the current code's. Then it
# runs make bench-live and make bench-sidebyside with LIVE_BENCH_BEFORE set to that binary: they
# load its image into the node and time hello-world rendered by both, interleaved
# (tests/live/before_test.go). Each brings the cluster up and takes it down, as make bench-live
# does. Environment:
#   LIVE_BENCH_RUNS         runs of make bench-live (default 5)
#   BEFORE_SIDEBYSIDE_RUNS  runs per size of make bench-sidebyside (default 3)
#   BEFORE_SIZES            its sizes (default "4 16")
# The copy and the image in podman's store are removed when it ends; the node's copy of the image
# goes with the cluster.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

[ $# -eq 1 ] || { echo "usage: keygen-before-after.sh COMMIT" >&2; exit 2; }
commit=$(git -C "$repo" rev-parse --verify --quiet "$1^{commit}") || { echo "keygen-before-after: $1 is no commit" >&2; exit 2; }
short=$(git -C "$repo" rev-parse --short "$commit")
command -v podman >/dev/null || { echo "keygen-before-after: podman not found (Debian: apt-get install podman runc)" >&2; exit 1; }

# The sub-makes get only the variables given here: a make that runs this script passes its own
# command line's (LIVE_BENCH_RUNS=...) in MAKEFLAGS, which would override them.
submake() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory "$@"; }

work=$(mktemp -d)
image=""
cleanup() {
  if [ -n "$image" ]; then
    podman rmi "$image" >/dev/null || echo "keygen-before-after: could not remove $image from podman's store" >&2
  fi
  rm -rf "$work"
}
trap cleanup EXIT

git -C "$repo" archive "$commit" | tar -x -C "$work"
submake -C "$work" image VERSION="before-$short" >&2
fn=$work/bin/minicluster-fn
image=$("$fn" version | sed -n 's/^keygen image: //p')
echo "keygen-before-after: $("$fn" version | head -n 1) from $commit, keygen image $image" >&2

export LIVE_BENCH_BEFORE=$fn
submake -C "$repo" bench-live LIVE_BENCH_RUNS="${LIVE_BENCH_RUNS:-5}"
submake -C "$repo" bench-sidebyside LIVE_BENCH_RUNS="${BEFORE_SIDEBYSIDE_RUNS:-3}" LIVE_BENCH_SIZES="${BEFORE_SIZES:-4 16}"
