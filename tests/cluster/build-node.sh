#!/usr/bin/env bash
# Builds the live-test cluster's binaries (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kubelet, kube-proxy, kubectl from tools/node; coredns from tools/node/coredns;
# containerd, containerd-shim-runc-v2 and ctr from tools/node/containerd) once per machine, into
#   ${MINICLUSTER_FN_CACHE:-/var/cache/minicluster-fn}/node-<key>/bin
# where <key> hashes everything that determines the build (the tool modules, their go.sum, this
# script, the Go version). A present directory is reused; a fresh machine builds from nothing
# (15-40 min cold on 2 busy cores). Prints the bin directory on stdout; progress goes to stderr.
set -euo pipefail
export GOFLAGS=-buildvcs=false CGO_ENABLED=0

repo=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tools/toolchain.sh
. "$repo/tools/toolchain.sh"
tools=$repo/tools/node
cache=${MINICLUSTER_FN_CACHE:-/var/cache/minicluster-fn}
# shellcheck source=tests/phases/record.sh
. "$repo/tests/phases/record.sh"

# The Kubernetes version is the module's; the binaries report it (kubectl version, /version).
k8s_version=$(cd "$tools" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
key=$( { go version; cat "$0" "$tools/go.mod" "$tools/go.sum" "$tools/etcd/main.go" \
  "$tools/coredns/go.mod" "$tools/coredns/go.sum" "$tools/coredns/main.go" \
  "$tools/containerd/go.mod" "$tools/containerd/go.sum"; } | sha256sum | cut -c1-16)
dest=$cache/node-$key
bins=(etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl coredns
  containerd containerd-shim-runc-v2 ctr)

complete() {
  local b
  for b in "${bins[@]}"; do [ -x "$1/bin/$b" ] || return 1; done
}

mkdir -p "$cache"
# One build at a time per key: a second caller (e.g. make cluster-up while make live builds) waits
# for the first and then finds its result.
exec 9>"$cache/node-$key.lock"
phase_lock 9
if complete "$dest"; then
  echo "build-node: using $dest/bin (cached)" >&2
  phase_cached "node binaries"
  echo "$dest/bin"
  exit 0
fi

work=$(mktemp -d "$cache/node-$key.building.XXXXXX")
trap 'rm -rf "$work"' EXIT
# A build stopped from outside (make test stops its builds ahead when a step fails) cleans up too.
trap 'exit 143' TERM
trap 'exit 130' INT
mkdir -p "$work/bin"

minor=${k8s_version#v1.}; minor=${minor%%.*}
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$k8s_version \
-X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor \
-X k8s.io/component-base/version.gitTreeState=clean"

start=$SECONDS
cpu=$(phase_cpu)
echo "build-node: building Kubernetes $k8s_version binaries and etcd into $dest (slow when cold)" >&2
# -trimpath, as Kubernetes' own release build and the root module: make integration compiles the
# same Kubernetes packages with the same flags, so this build reuses that compile, and both the
# standard library the root module's tests compiled.
(cd "$tools" && go build -trimpath -ldflags "$ldflags" -o "$work/bin/" \
  ./etcd k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubelet \
  k8s.io/kubernetes/cmd/kube-proxy k8s.io/kubernetes/cmd/kubectl)
echo "build-node: Kubernetes binaries and etcd built in $((SECONDS - start)) s; building coredns" >&2
phase_record build "node binaries: Kubernetes and etcd" "$((SECONDS - start))" built "$(($(phase_cpu) - cpu))"
part=$SECONDS
part_cpu=$(phase_cpu)
(cd "$tools/coredns" && go build -trimpath -ldflags "-s -w" -o "$work/bin/coredns" .)
echo "build-node: coredns built at $((SECONDS - start)) s; building containerd" >&2
phase_record build "node binaries: CoreDNS" "$((SECONDS - part))" built "$(($(phase_cpu) - part_cpu))"
part=$SECONDS
part_cpu=$(phase_cpu)
# Without cgo: the btrfs, devmapper and zfs snapshotters (the only parts that need it) are left out;
# the cluster uses overlayfs. The version is what the binaries report (containerd --version).
ctd_version=$(cd "$tools/containerd" && go list -m -f '{{.Version}}' github.com/containerd/containerd/v2)
(cd "$tools/containerd" && go build -trimpath -tags 'no_btrfs no_devmapper no_zfs' \
  -ldflags "-s -w -X github.com/containerd/containerd/v2/version.Version=$ctd_version" -o "$work/bin/" \
  github.com/containerd/containerd/v2/cmd/containerd github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 \
  github.com/containerd/containerd/v2/cmd/ctr)
echo "build-node: all built in $((SECONDS - start)) s" >&2
phase_record build "node binaries: containerd" "$((SECONDS - part))" built "$(($(phase_cpu) - part_cpu))"
phase_record build "node binaries" "$SECONDS" built "$(phase_cpu)"

complete "$work" || { echo "build-node: a binary is missing in $work/bin" >&2; exit 1; }
# Another build of the same key may have finished meanwhile: either result is the same build.
if ! mv -T "$work" "$dest" 2>/dev/null; then
  complete "$dest" || { echo "build-node: cannot install $dest" >&2; exit 1; }
fi
trap - EXIT
echo "$dest/bin"
