#!/usr/bin/env bash
# Builds Kueue's manager (tools/kueue: Kueue's controllers, scheduler and webhooks with the
# batch/Job integration, at the version its go.mod pins) once per machine, and takes Kueue's CRDs
# and webhook configurations from the same module version, into
#   ${MINICLUSTER_FN_CACHE:-/var/cache/minicluster-fn}/kueue-<key>/bin/kueue
#   ${MINICLUSTER_FN_CACHE:-/var/cache/minicluster-fn}/kueue-<key>/crds      config/components/crd/bases/*.yaml
#   ${MINICLUSTER_FN_CACHE:-/var/cache/minicluster-fn}/kueue-<key>/webhooks.yaml
#       config/components/webhook/manifests.yaml (kueue-up.sh keeps the webhooks the manager serves)
# where <key> hashes everything that determines the build (go.mod, go.sum, main.go, this script,
# the Go version). A present directory is reused. Prints kueue-<key> on stdout; progress goes to
# stderr.
set -euo pipefail
export GOFLAGS=-buildvcs=false CGO_ENABLED=0

repo=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tools/toolchain.sh
. "$repo/tools/toolchain.sh"
tools=$repo/tools/kueue
cache=${MINICLUSTER_FN_CACHE:-/var/cache/minicluster-fn}
# shellcheck source=tests/phases/record.sh
. "$repo/tests/phases/record.sh"

module=sigs.k8s.io/kueue
key=$( { go version; cat "$0" "$tools/go.mod" "$tools/go.sum" "$tools/main.go"; } | sha256sum | cut -c1-16)
dest=$cache/kueue-$key

complete() {
  [ -x "$1/bin/kueue" ] && [ -s "$1/webhooks.yaml" ] && [ -s "$1/crds/kueue.x-k8s.io_workloads.yaml" ]
}

mkdir -p "$cache"
# One build at a time per key: a second caller waits for the first and then finds its result.
exec 9>"$cache/kueue-$key.lock"
phase_lock 9
if complete "$dest"; then
  echo "build-kueue: using $dest (cached)" >&2
  phase_cached "Kueue"
  echo "$dest"
  exit 0
fi

work=$(mktemp -d "$cache/kueue-$key.building.XXXXXX")
trap 'rm -rf "$work"' EXIT
# A build stopped from outside (make test stops its builds ahead when a step fails) cleans up too.
trap 'exit 143' TERM
trap 'exit 130' INT
mkdir -p "$work/bin" "$work/crds"

cd "$tools"
version=$(go list -m -f '{{.Version}}' "$module")
start=$SECONDS
echo "build-kueue: building $module@$version into $dest (minutes when cold)" >&2
# The flags of Kueue's own release build (-trimpath, -s -w, the version it logs and reports).
go build -trimpath -ldflags "-s -w -X sigs.k8s.io/kueue/pkg/version.GitVersion=$version" -o "$work/bin/kueue" .
echo "build-kueue: built in $((SECONDS - start)) s" >&2

# go build fetched the module, so its directory in the module cache exists. The module cache is
# read-only; the copies need not be.
dir=$(go list -m -f '{{.Dir}}' "$module")
install -m 0644 "$dir"/config/components/crd/bases/*.yaml "$work/crds/"
install -m 0644 "$dir/config/components/webhook/manifests.yaml" "$work/webhooks.yaml"
echo "build-kueue: CRDs: $(cd "$work/crds" && echo *)" >&2

complete "$work" || { echo "build-kueue: the binary, a CRD or the webhooks are missing in $work" >&2; exit 1; }
# Another build of the same key may have finished meanwhile: either result is the same build.
if ! mv -T "$work" "$dest" 2>/dev/null; then
  complete "$dest" || { echo "build-kueue: cannot install $dest" >&2; exit 1; }
fi
trap - EXIT
phase_record build "Kueue" "$SECONDS" built "$(phase_cpu)"
echo "$dest"
