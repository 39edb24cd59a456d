#!/usr/bin/env bash
# Imports images into the running live-test cluster's containerd (namespace k8s.io) of every node
# that runs (node.sh adds nodes; one powered off gets none), where pods with imagePullPolicy
# Never/IfNotPresent find them; nothing is pulled here.
# usage: load-image.sh IMAGE-OR-ARCHIVE...
#   an existing file is taken as an image archive (podman save / docker-archive or OCI);
#   anything else as the name of a local podman image, which is saved to an archive first.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/env.sh
. "$here/env.sh"

[ $# -gt 0 ] || { echo "usage: load-image.sh IMAGE-OR-ARCHIVE..." >&2; exit 2; }
[ -S "$CONTAINERD_SOCK" ] || { echo "load-image: no containerd socket at $CONTAINERD_SOCK: is the cluster up (make cluster-up)?" >&2; exit 1; }
# The cluster's own ctr (build-node.sh builds it with containerd), which up.sh recorded.
NODE_BIN=$(cat "$STATE/run/node-bin")

for image in "$@"; do
  if [ -f "$image" ]; then
    archive=$image
  else
    archive=$(mktemp -u "$STATE/tmp/image.XXXXXX.tar")   # podman save refuses to overwrite a file
    podman save --quiet --format docker-archive -o "$archive" "$image"
  fi
  for sock in $(node_socks); do
    if ! { [ -S "$sock" ] && "$NODE_BIN/ctr" --address "$sock" version > /dev/null 2>&1; }; then continue; fi
    import_archive "$sock" "$archive"
  done
  [ "$archive" = "$image" ] || rm -f "$archive"
  echo "load-image: imported $image" >&2
done
