#!/usr/bin/env bash
# Builds the local stand-in images the live tests run, without a registry and without RUN steps
# (podman cannot run containers on these VMs: no CAP_SYS_RESOURCE), and lists their archives
# (`podman save`) for `ctr -n k8s.io images import`, in OUTDIR/images.txt: "<archive> <image ref>",
# one image a line.
#
#   tests/images/build.sh [OUTDIR]     (default: $MINICLUSTER_FN_TEST_IMAGES, else bin/test-images)
#
# The images (see README.md here): the application image and the flux view, which build-view.sh
# builds and caches per machine, and the keygen image the built binary names (make image), saved to
# OUTDIR/project.tar, again only when the image changed.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:-${MINICLUSTER_FN_TEST_IMAGES:-$repo/bin/test-images}}

command -v podman >/dev/null || { echo "build.sh: podman not found (Debian: see .ci/run)" >&2; exit 1; }
mkdir -p "$out"
elapsed() { echo $(( $(date +%s) - $1 )); }

# save REF ARCHIVE STAMP: podman save, unless ARCHIVE was made from the same STAMP. podman save
# refuses to overwrite an archive, so the old one goes first.
archive_current() { [ -f "$out/$1" ] && [ -f "$out/$1.key" ] && [ "$(cat "$out/$1.key")" = "$2" ]; }
save() {
  local ref=$1 archive=$2 stamp=$3
  rm -f "$out/$archive" "$out/$archive.key"
  podman save -q -o "$out/$archive" "$ref" >/dev/null
  printf '%s\n' "$stamp" > "$out/$archive.key"
}

# The application and flux view images.
view_dir=$("$here/build-view.sh")

# The project image (make image), under the reference the built binary writes into keygen Jobs.
start=$(date +%s)
make -s -C "$repo" image >/dev/null
project_ref=$("$repo/bin/minicluster-fn" version | sed -n 's/^keygen image: //p')
project_id=$(podman image inspect --format '{{.Id}}' "$project_ref")
if archive_current project.tar "$project_id"; then
  echo "build.sh: project.tar is current" >&2
else
  save "$project_ref" project.tar "$project_id"
fi
echo "build.sh: $project_ref in $(elapsed "$start") s" >&2

{ cat "$view_dir/images.txt"; printf '%s %s\n' "$out/project.tar" "$project_ref"; } > "$out/images.txt"
cat "$out/images.txt"
