#!/usr/bin/env bash
# Builds Flux CD's source-controller and kustomize-controller (pinned in tools/fluxcd) once per
# machine, and takes their CRDs from the same module versions, into
#   ${MINICLUSTER_FN_CACHE:-/var/cache/minicluster-fn}/fluxcd-<key>/bin    the two binaries
#   ${MINICLUSTER_FN_CACHE:-/var/cache/minicluster-fn}/fluxcd-<key>/crds   config/crd/bases/*.yaml of both
# where <key> hashes everything that determines the build (tools/fluxcd's go.mod and go.sum, this
# script, the Go version). A present directory is reused. Prints fluxcd-<key> on stdout; progress
# goes to stderr.
set -euo pipefail
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false CGO_ENABLED=0

repo=$(cd "$(dirname "$0")/../.." && pwd)
tools=$repo/tools/fluxcd
cache=${MINICLUSTER_FN_CACHE:-/var/cache/minicluster-fn}

controllers=(github.com/fluxcd/source-controller github.com/fluxcd/kustomize-controller)
bins=(source-controller kustomize-controller)
# The kinds kustomize-controller watches (it fails to start without their CRDs) and its own. The
# other CRDs of config/crd/bases (HelmRepository, HelmChart, ExternalArtifact) are copied too.
crds=(source.toolkit.fluxcd.io_gitrepositories.yaml source.toolkit.fluxcd.io_ocirepositories.yaml
  source.toolkit.fluxcd.io_buckets.yaml kustomize.toolkit.fluxcd.io_kustomizations.yaml)

key=$( { go version; cat "$0" "$tools/go.mod" "$tools/go.sum"; } | sha256sum | cut -c1-16)
dest=$cache/fluxcd-$key

complete() {
  local f
  for f in "${bins[@]}"; do [ -x "$1/bin/$f" ] || return 1; done
  for f in "${crds[@]}"; do [ -s "$1/crds/$f" ] || return 1; done
}

mkdir -p "$cache"
# One build at a time per key: a second caller waits for the first and then finds its result.
exec 9>"$cache/fluxcd-$key.lock"
flock 9
if complete "$dest"; then
  echo "build-fluxcd: using $dest (cached)" >&2
  echo "$dest"
  exit 0
fi

work=$(mktemp -d "$cache/fluxcd-$key.building.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/crds"

cd "$tools"
versions=$(go list -m -f '{{.Path}}@{{.Version}}' "${controllers[@]}" | tr '\n' ' ')
start=$SECONDS
echo "build-fluxcd: building ${versions}into $dest (a few minutes when cold)" >&2
# The flags of the controllers' own release builds (-trimpath; their Makefiles add -s -w).
go build -trimpath -ldflags "-s -w" -o "$work/bin/" "${controllers[@]}"
echo "build-fluxcd: built in $((SECONDS - start)) s" >&2

# go build fetched both modules, so their directories in the module cache exist.
mapfile -t dirs < <(go list -m -f '{{.Dir}}' "${controllers[@]}")
for dir in "${dirs[@]}"; do
  # The module cache is read-only; the copies need not be.
  install -m 0644 "$dir"/config/crd/bases/*.yaml "$work/crds/"
done
echo "build-fluxcd: CRDs: $(cd "$work/crds" && echo *)" >&2

complete "$work" || { echo "build-fluxcd: a binary or CRD is missing in $work" >&2; exit 1; }
# Another build of the same key may have finished meanwhile: either result is the same build.
if ! mv -T "$work" "$dest" 2>/dev/null; then
  complete "$dest" || { echo "build-fluxcd: cannot install $dest" >&2; exit 1; }
fi
trap - EXIT
echo "$dest"
