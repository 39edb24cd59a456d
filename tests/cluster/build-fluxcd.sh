#!/usr/bin/env bash
# Builds Flux CD's source-controller and kustomize-controller (pinned in tools/fluxcd) and its CLI,
# flux (pinned in tools/fluxcd-cli), once per machine, and takes the controllers' CRDs from the same
# module versions, into
#   ${MINICLUSTER_FN_CACHE:-/var/cache/minicluster-fn}/fluxcd-<key>/bin    the three binaries
#   ${MINICLUSTER_FN_CACHE:-/var/cache/minicluster-fn}/fluxcd-<key>/crds   config/crd/bases/*.yaml of both controllers
# where <key> hashes everything that determines the build (both modules' go.mod and go.sum, this
# script, the Go version). A present directory is reused. Prints fluxcd-<key> on stdout; progress
# goes to stderr.
set -euo pipefail
export GOFLAGS=-buildvcs=false CGO_ENABLED=0

repo=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tools/toolchain.sh
. "$repo/tools/toolchain.sh"
tools=$repo/tools/fluxcd
cli=$repo/tools/fluxcd-cli
cache=${MINICLUSTER_FN_CACHE:-/var/cache/minicluster-fn}
# shellcheck source=tests/phases/record.sh
. "$repo/tests/phases/record.sh"

controllers=(github.com/fluxcd/source-controller github.com/fluxcd/kustomize-controller)
bins=(source-controller kustomize-controller flux)
# The kinds kustomize-controller watches (it fails to start without their CRDs) and its own. The
# other CRDs of config/crd/bases (HelmRepository, HelmChart, ExternalArtifact) are copied too.
crds=(source.toolkit.fluxcd.io_gitrepositories.yaml source.toolkit.fluxcd.io_ocirepositories.yaml
  source.toolkit.fluxcd.io_buckets.yaml kustomize.toolkit.fluxcd.io_kustomizations.yaml)

key=$( { go version; cat "$0" "$tools/go.mod" "$tools/go.sum" "$cli/go.mod" "$cli/go.sum"; } | sha256sum | cut -c1-16)
dest=$cache/fluxcd-$key

complete() {
  local f
  for f in "${bins[@]}"; do [ -x "$1/bin/$f" ] || return 1; done
  for f in "${crds[@]}"; do [ -s "$1/crds/$f" ] || return 1; done
}

mkdir -p "$cache"
# One build at a time per key: a second caller waits for the first and then finds its result.
exec 9>"$cache/fluxcd-$key.lock"
phase_lock 9
if complete "$dest"; then
  echo "build-fluxcd: using $dest (cached)" >&2
  phase_cached "Flux CD controllers and CLI"
  echo "$dest"
  exit 0
fi

work=$(mktemp -d "$cache/fluxcd-$key.building.XXXXXX")
trap 'rm -rf "$work"' EXIT
# A build stopped from outside (make test stops its builds ahead when a step fails) cleans up too.
trap 'exit 143' TERM
trap 'exit 130' INT
mkdir -p "$work/bin" "$work/crds"

cd "$tools"
versions=$(go list -m -f '{{.Path}}@{{.Version}}' "${controllers[@]}" | tr '\n' ' ')
start=$SECONDS
part_cpu=$(phase_cpu)
echo "build-fluxcd: building ${versions}into $dest (a few minutes when cold)" >&2
# The flags of the controllers' own release builds (-trimpath, and -s -w from their Makefiles):
# tools/node and tests/integration compile the Kubernetes, gRPC, OpenTelemetry and golang.org/x
# packages with the same flags, at the versions tools/fluxcd selects (.ci/hygiene.sh), so this build
# reuses what they compiled instead of compiling them again.
go build -trimpath -ldflags "-s -w" -o "$work/bin/" "${controllers[@]}"
echo "build-fluxcd: built in $((SECONDS - start)) s" >&2
phase_record build "Flux CD: source-controller, kustomize-controller" "$((SECONDS - start))" built "$(($(phase_cpu) - part_cpu))"

# The CLI: cmd/flux embeds manifests/*.yaml, which flux2's module zip lacks, so it is built in a
# copy of the module directory with a placeholder manifest (tools/fluxcd-cli/go.mod says more).
# go mod download checks the module against tools/fluxcd-cli's go.sum before it is copied.
fluxdir=$(cd "$cli" && go mod download github.com/fluxcd/flux2/v2 && go list -m -f '{{.Dir}}' github.com/fluxcd/flux2/v2)
fluxversion=$(cd "$cli" && go list -m -f '{{.Version}}' github.com/fluxcd/flux2/v2)
start=$SECONDS
part_cpu=$(phase_cpu)
echo "build-fluxcd: building github.com/fluxcd/flux2/v2/cmd/flux@$fluxversion" >&2
# The copy lives in $work, which the EXIT trap removes if the build fails.
cp -r "$fluxdir" "$work/flux2"
# The module cache is read-only; the copy must take the manifests directory.
chmod -R u+w "$work/flux2"
mkdir "$work/flux2/cmd/flux/manifests"
echo "# No Flux CD install manifests in this build: flux install and flux bootstrap fail." \
  > "$work/flux2/cmd/flux/manifests/none.yaml"
# The copy's build list is tools/fluxcd-cli's, whose requirements raise flux2's own to the
# controllers' versions wherever both compile a module, so that the CLI reuses the packages the
# controllers' build compiled (in a cold run the CLI took 250 CPU-s with flux2's own versions, 42
# with these: x/sys alone differing recompiles everything above it). tidy adds the go.sum lines of
# the raised versions.
mapfile -t requires < <(cd "$cli" && go list -m -f '{{if not .Main}}{{if ne .Path "github.com/fluxcd/flux2/v2"}}-require={{.Path}}@{{.Version}}{{end}}{{end}}' all)
(cd "$work/flux2" && go mod edit "${requires[@]}" && go mod tidy)
# Nothing compiled may be at a version other than tools/fluxcd-cli's.
wanted=$(cd "$cli" && go list -m -f '{{.Path}} {{.Version}}' all | sort)
compiled=$(cd "$work/flux2" && go list -deps -f '{{with .Module}}{{if not .Main}}{{.Path}} {{.Version}}{{end}}{{end}}' ./cmd/flux | sort -u)
stray=$(comm -13 <(echo "$wanted") <(echo "$compiled"))
[ -z "$stray" ] || { echo "build-fluxcd: the flux CLI would compile versions that tools/fluxcd-cli does not select:" >&2; echo "$stray" >&2; exit 1; }
# A module both compile at two versions only costs compile time: said, not failed.
differing=$(join <(echo "$compiled") <(cd "$tools" && go list -deps -f '{{with .Module}}{{.Path}} {{.Version}}{{end}}' "${controllers[@]}" | sort -u) | awk '$2 != $3 {print $1}' | tr '\n' ' ')
[ -z "$differing" ] || echo "build-fluxcd: the CLI and the controllers compile these modules at different versions (raise tools/fluxcd-cli's): $differing" >&2
# The flags of flux2's release build, -trimpath like the controllers; main.VERSION is what flux
# version prints and what flux check compares the controllers with.
(cd "$work/flux2" && go build -trimpath -ldflags "-s -w -X main.VERSION=${fluxversion#v}" -o "$work/bin/flux" ./cmd/flux)
rm -rf "$work/flux2"
echo "build-fluxcd: built flux in $((SECONDS - start)) s" >&2
phase_record build "Flux CD: flux CLI" "$((SECONDS - start))" built "$(($(phase_cpu) - part_cpu))"

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
phase_record build "Flux CD controllers and CLI" "$SECONDS" built "$(phase_cpu)"
echo "$dest"
