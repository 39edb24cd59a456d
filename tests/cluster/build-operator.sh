#!/usr/bin/env bash
# Builds the Flux Framework operator's manager from ../shared/vendor (the module proxy refuses the
# operator's module), with its real keygen as its own image build has it: keygen.go.template over
# the stub keygen.go, cgo against Debian's CZMQ, ZeroMQ and libsodium. Once per machine, into
#   ${MINICLUSTER_FN_CACHE:-/var/cache/minicluster-fn}/operator-<key>/manager   the manager
#   ${MINICLUSTER_FN_CACHE:-/var/cache/minicluster-fn}/operator-<key>/config    its config/ (CRD, RBAC)
# where <key> hashes the tarball, this script and the Go version. A present directory is reused.
# Prints that directory on stdout; progress goes to stderr. The tests/operator oracle builds the
# same source with its stub keygen, with the same flags (cgo on, -trimpath, no CGO_* variables):
# so this build compiles little more than the keygen and what only the manager imports, and takes
# the rest (Kubernetes' client packages, controller-runtime) from the Go build cache.
set -euo pipefail
export GOFLAGS="-buildvcs=false -mod=readonly"
unset CGO_CFLAGS CGO_CPPFLAGS CGO_CXXFLAGS CGO_LDFLAGS

repo=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tools/toolchain.sh
. "$repo/tools/toolchain.sh"
tarball=${MINICLUSTER_FN_OPERATOR_TARBALL:-$repo/../shared/vendor/flux-operator-0d75cef8.tar.gz}
cache=${MINICLUSTER_FN_CACHE:-/var/cache/minicluster-fn}
# shellcheck source=tests/phases/record.sh
. "$repo/tests/phases/record.sh"
[ -f "$tarball" ] || { echo "build-operator: the operator's source is not at $tarball (../shared is absent)" >&2; exit 3; }

key=$( { go version; cat "$0" "$tarball"; } | sha256sum | cut -c1-16)
dest=$cache/operator-$key
complete() { [ -x "$1/manager" ] && [ -s "$1/config/crd/bases/flux-framework.org_miniclusters.yaml" ] && [ -s "$1/config/rbac/role.yaml" ]; }

mkdir -p "$cache"
# One build at a time per key: a second caller waits for the first and then finds its result.
exec 9>"$cache/operator-$key.lock"
phase_lock 9
if complete "$dest"; then
  echo "build-operator: using $dest (cached)" >&2
  phase_cached "the operator's manager"
  echo "$dest"
  exit 0
fi

work=$(mktemp -d "$cache/operator-$key.building.XXXXXX")
trap 'rm -rf "$work"' EXIT
# A build stopped from outside (make test stops its builds ahead when a step fails) cleans up too.
trap 'exit 143' TERM
trap 'exit 130' INT
mkdir "$work/src"
tar -xzf "$tarball" -C "$work/src" --strip-components=1
# What the operator's Dockerfile does before its build: the real keygen replaces the stub.
# The libraries go into the keygen's own cgo preamble, not into CGO_LDFLAGS: those variables are
# part of every cgo package's build (the net package's too), so they would make every package above
# it, all of Kubernetes' client packages, differ from the oracle's build of them.
sed '0,/^\/\*$/s//\/*\n#cgo LDFLAGS: -lstdc++ -lczmq -lzmq/' "$work/src/pkg/flux/keygen.go.template" > "$work/src/pkg/flux/keygen.go"
grep -q '^#cgo LDFLAGS: ' "$work/src/pkg/flux/keygen.go" || { echo "build-operator: keygen.go.template has no cgo preamble" >&2; exit 1; }
start=$SECONDS
echo "build-operator: building the manager with cgo keygen into $dest (a few minutes when cold)" >&2
(cd "$work/src" && CGO_ENABLED=1 go build -trimpath -o "$work/manager" .)
echo "build-operator: built in $((SECONDS - start)) s" >&2
cp -r "$work/src/config" "$work/config"
rm -rf "$work/src"

complete "$work" || { echo "build-operator: the manager or its config is missing in $work" >&2; exit 1; }
# Another build of the same key may have finished meanwhile: either result is the same build.
if ! mv -T "$work" "$dest" 2>/dev/null; then
  complete "$dest" || { echo "build-operator: cannot install $dest" >&2; exit 1; }
fi
trap - EXIT
phase_record build "the operator's manager" "$SECONDS" built "$(phase_cpu)"
echo "$dest"
