#!/usr/bin/env bash
# Builds Argo CD's application-controller, repo-server, cmp-server and git-ask-pass (pinned in
# tools/argocd) once per machine, and takes the CRDs and the repo server's wrapper scripts from the
# same module version, into
#   ${MINICLUSTER_FN_CACHE:-/var/cache/minicluster-fn}/argocd-<key>/bin    argocd, and the four
#       component names linked to it (it runs the component it is started as)
#   ${MINICLUSTER_FN_CACHE:-/var/cache/minicluster-fn}/argocd-<key>/crds   manifests/crds/*-crd.yaml
#   ${MINICLUSTER_FN_CACHE:-/var/cache/minicluster-fn}/argocd-<key>/hack   git-verify-wrapper.sh and
#       gpg-wrapper.sh
# The repo server needs bin and hack on its PATH: it runs Git with GIT_ASKPASS=argocd and verifies
# signatures through the two wrappers. <key> hashes everything that determines the build (the
# module's go.mod.src, go.sum.src and main.go.src, this script, the Go toolchain). A present
# directory is reused. Prints argocd-<key>'s path on stdout; progress goes to stderr.
set -euo pipefail
# -trimpath for go vet too: with the same flags as go build, vet compiles the dependencies once, for
# both (without it, the cold build compiled them twice).
export GOFLAGS="-buildvcs=false -trimpath" CGO_ENABLED=0

repo=$(cd "$(dirname "$0")/../.." && pwd)
tools=$repo/tools/argocd
cache=${MINICLUSTER_FN_CACHE:-/var/cache/minicluster-fn}
# shellcheck source=tests/phases/record.sh
. "$repo/tests/phases/record.sh"

# The module's files under the names they get in the scratch directory. In the checkout they carry
# a .src suffix, so that the machine's Go never sees them (tools/argocd/README.md).
declare -A sources=([go.mod.src]=go.mod [go.sum.src]=go.sum [main.go.src]=main.go)

# Argo CD needs a newer Go than the machine's: the go command runs as the repository's toolchain
# (tools/toolchain.sh), which go.mod.src's toolchain line must name too, or the checks below would
# judge the module with a Go other than the one that builds it.
# shellcheck source=tools/toolchain.sh
. "$repo/tools/toolchain.sh"
toolchain=$(awk '$1 == "toolchain" { print $2 }' "$tools/go.mod.src")
[ "$toolchain" = "$GOTOOLCHAIN" ] || { echo "build-argocd: $tools/go.mod.src's toolchain line names ${toolchain:-nothing}, tools/toolchain.sh $GOTOOLCHAIN: they must be the same" >&2; exit 1; }

module=github.com/argoproj/argo-cd/v3
links=(argocd-application-controller argocd-repo-server argocd-cmp-server argocd-git-ask-pass)
# The kinds the application controller watches (Application, AppProject) and ApplicationSet.
crds=(application-crd.yaml appproject-crd.yaml applicationset-crd.yaml)
wrappers=(git-verify-wrapper.sh gpg-wrapper.sh)

key=$( { go version; cat "$0" "$tools/go.mod.src" "$tools/go.sum.src" "$tools/main.go.src"; } | sha256sum | cut -c1-16)
dest=$cache/argocd-$key

complete() {
  local f
  for f in argocd "${links[@]}"; do [ -x "$1/bin/$f" ] || return 1; done
  for f in "${crds[@]}"; do [ -s "$1/crds/$f" ] || return 1; done
  for f in "${wrappers[@]}"; do [ -x "$1/hack/$f" ] || return 1; done
}

mkdir -p "$cache"
# One build at a time per key: a second caller waits for the first and then finds its result.
exec 9>"$cache/argocd-$key.lock"
phase_lock 9
if complete "$dest"; then
  echo "build-argocd: using $dest (cached)" >&2
  phase_cached "Argo CD"
  echo "$dest"
  exit 0
fi

work=$(mktemp -d "$cache/argocd-$key.building.XXXXXX")
trap 'rm -rf "$work"' EXIT
# A build stopped from outside (make test stops its builds ahead when a step fails) cleans up too.
trap 'exit 143' TERM
trap 'exit 130' INT
mkdir -p "$work/src" "$work/bin" "$work/crds" "$work/hack"
for f in "${!sources[@]}"; do cp "$tools/$f" "$work/src/${sources[$f]}"; done

cd "$work/src"
# The checks that the repository's hygiene and lint cannot run on this module with the machine's
# Go, each fatal: go.mod and go.sum tidy, main.go formatted (by the toolchain's own gofmt), vet.
if ! diff=$(go mod tidy -diff 2>&1); then
  echo "build-argocd: go mod tidy would change tools/argocd's go.mod.src or go.sum.src (tools/argocd/README.md says how to update them):" >&2
  printf '%s\n' "$diff" >&2
  exit 1
fi
unformatted=$("$(go env GOROOT)/bin/gofmt" -l main.go)
[ -z "$unformatted" ] || { echo "build-argocd: tools/argocd/main.go.src needs gofmt" >&2; exit 1; }
# The Kubernetes client packages at the root module's release, so that the Go build cache holds
# one compile of them for both (tools/argocd/README.md).
kube=$(go list -m -f '{{with .Replace}}{{.Version}}{{else}}{{.Version}}{{end}}' k8s.io/client-go)
rootkube=$(cd "$repo" && go list -m -f '{{.Version}}' k8s.io/client-go)
[ "$kube" = "$rootkube" ] || { echo "build-argocd: tools/argocd/go.mod.src has k8s.io/client-go $kube, the root module $rootkube: move its Kubernetes replace lines to $rootkube (tools/argocd/README.md)" >&2; exit 1; }
version=$(go list -m -f '{{.Version}}' "$module")
start=$SECONDS
echo "build-argocd: vetting and building $module@$version ($toolchain) into $dest (a few minutes when cold)" >&2
go vet . || { echo "build-argocd: go vet failed on tools/argocd/main.go.src (main.go in the scratch copy)" >&2; exit 1; }
echo "build-argocd: vetted in $((SECONDS - start)) s (this compiled the dependencies)" >&2
start=$SECONDS
# Upstream's release flags (CGO_ENABLED=0, and the version its components log and report, which
# reads v<version>+unknown without a Git commit), and -trimpath (GOFLAGS) -s -w for a smaller binary.
go build -ldflags "-s -w -X github.com/argoproj/argo-cd/v3/common.version=${version#v}" \
  -o "$work/bin/argocd" .
echo "build-argocd: built in $((SECONDS - start)) s" >&2
# Relative links, so that the directory can be renamed into place.
for f in "${links[@]}"; do ln -s argocd "$work/bin/$f"; done

# go build fetched the module, so its directory in the module cache exists. The module cache is
# read-only; the copies need not be.
dir=$(go list -m -f '{{.Dir}}' "$module")
for f in "${crds[@]}"; do install -m 0644 "$dir/manifests/crds/$f" "$work/crds/"; done
for f in "${wrappers[@]}"; do install -m 0755 "$dir/hack/$f" "$work/hack/"; done
echo "build-argocd: CRDs: ${crds[*]}; wrappers: ${wrappers[*]}" >&2
cd "$cache"
rm -rf "$work/src"

complete "$work" || { echo "build-argocd: a binary, CRD or wrapper is missing in $work" >&2; exit 1; }
# Another build of the same key may have finished meanwhile: either result is the same build.
if ! mv -T "$work" "$dest" 2>/dev/null; then
  complete "$dest" || { echo "build-argocd: cannot install $dest" >&2; exit 1; }
fi
trap - EXIT
phase_record build "Argo CD" "$SECONDS" built "$(phase_cpu)"
echo "$dest"
