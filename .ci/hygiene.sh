#!/usr/bin/env bash
# hygiene: the repository holds sources, not build output, and every Go module is tidy.
#   - no file in the Git index is over 1 MB (1,000,000 bytes): binaries and downloads belong in bin/
#     or in caches, which .gitignore keeps out;
#   - `go mod tidy -diff` changes nothing in any module: every go.mod in the index is checked, so a
#     new module is covered without editing this script;
#   - the Go builds compile every module that two of them share at one version (after replace
#     lines): the root module, tests/integration, tools/node, its CoreDNS and containerd,
#     tools/fluxcd and tools/argocd, all with the root module's flags (no cgo, -trimpath), so that
#     each reuses the packages the builds before it compiled: the Kubernetes API types and client
#     packages, gRPC, OpenTelemetry, golang.org/x (the Kubernetes part of the node build took 222 s
#     instead of 671 s once it shared tests/integration's; docs/testing.md). A module that
#     tools/fluxcd replaces is Flux CD's own pin (its go.mod says which) and may differ.
#   - no build compiles a k8s.io/kube-openapi that Go 1.27, the repository's toolchain, breaks
#     (tools/toolchain.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

limit=1000000
failed=0
pids=()

# The index's blob sizes, not the work tree's: what a commit would contain is what counts.
while read -r _ object _ path; do
  size=$(git cat-file -s "$object")
  if [ "$size" -gt "$limit" ]; then
    echo "hygiene: $path is $size bytes in the Git index, over 1 MB: build or download it instead of committing it" >&2
    failed=1
  fi
done < <(git ls-files --stage)

# Every module at once: on a new machine this is where the modules are downloaded, and the time
# goes to waiting for the module proxy, not to the CPU.
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
dirs=()
while IFS= read -r -d '' gomod; do
  dir=$(dirname "$gomod")
  n=${#dirs[@]}
  dirs+=("$dir")
  (cd "$dir" && go mod tidy -diff > "$out/$n" 2>&1) &
  pids+=($!)
done < <(git ls-files -z '*go.mod')
for n in "${!dirs[@]}"; do
  if ! wait "${pids[n]}"; then
    echo "hygiene: go mod tidy would change ${dirs[n]} (run: cd ${dirs[n]} && go mod tidy):" >&2
    cat "$out/$n" >&2
    failed=1
  fi
done

# The modules whose packages a build compiles, as "path version", the version a replace line
# selects where there is one; the root module's and tests/integration's with their tests.
compiled() { (cd "$1" && shift && CGO_ENABLED=0 go list -deps -f '{{with .Module}}{{if not .Main}}{{.Path}} {{with .Replace}}{{.Version}}{{else}}{{.Version}}{{end}}{{end}}{{end}}' "$@") | sort -u; }
declare -A built
built[root]=$(compiled . -test ./...)
built[coredns]=$(compiled tools/node/coredns .)
# The packages tests/cluster/build-node.sh builds, with its tags.
built[containerd]=$(compiled tools/node/containerd -tags 'no_btrfs no_devmapper no_zfs' \
  github.com/containerd/containerd/v2/cmd/containerd github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 \
  github.com/containerd/containerd/v2/cmd/ctr)
# The packages tests/cluster/build-node.sh and build-fluxcd.sh build (the flux CLI is checked by
# build-fluxcd.sh against tools/fluxcd-cli, which raises it to the controllers' versions).
built[integration]=$(compiled tests/integration -test ./...)
built[node]=$(compiled tools/node ./etcd k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy k8s.io/kubernetes/cmd/kubectl)
built[fluxcd]=$(compiled tools/fluxcd github.com/fluxcd/source-controller github.com/fluxcd/kustomize-controller)
# Argo CD's module is kept under other names (tools/argocd/README.md): listed from a scratch copy.
argocd=$(mktemp -d)
for f in go.mod go.sum main.go; do cp "tools/argocd/$f.src" "$argocd/$f"; done
built[argocd]=$(compiled "$argocd" .)
rm -rf "$argocd"
fluxcd_pins=$(cd tools/fluxcd && go list -m -f '{{if .Replace}}{{.Path}}{{end}}' all)
names=(root integration node coredns containerd fluxcd argocd)
for i in "${!names[@]}"; do for j in "${!names[@]}"; do
  [ "$i" -lt "$j" ] || continue
  a=${names[i]} b=${names[j]}
  mismatch=$(join <(echo "${built[$a]}") <(echo "${built[$b]}") | awk '$2 != $3')
  if [ "$a" = fluxcd ] || [ "$b" = fluxcd ]; then
    mismatch=$(awk 'NR == FNR { pin[$1] = 1; next } !($1 in pin)' <(echo "$fluxcd_pins") <(echo "$mismatch"))
  fi
  if [ -n "$mismatch" ]; then
    echo "hygiene: the $a and $b builds compile these modules at different versions (module, $a, $b):" >&2
    echo "$mismatch" >&2
    echo "hygiene: raise the lower one (go get module@version, then go mod tidy), or both compile its packages" >&2
    failed=1
  fi
done; done

# No build compiles a k8s.io/kube-openapi whose copy of go-json-experiment is an alias of Go 1.27's
# encoding/json/v2, which drops the x-kubernetes-* extensions (tools/toolchain.sh says more).
modcache=$(go env GOMODCACHE)
for b in "${!built[@]}"; do
  version=$(awk '$1 == "k8s.io/kube-openapi" { print $2 }' <<< "${built[$b]}")
  if [ -n "$version" ] && [ -e "$modcache/k8s.io/kube-openapi@$version/pkg/internal/third_party/go-json-experiment/json/alias.go" ]; then
    echo "hygiene: the $b build compiles k8s.io/kube-openapi $version, whose JSON copy Go 1.27 turns into encoding/json/v2 (tools/toolchain.sh): raise it to the root module's" >&2
    failed=1
  fi
done

if [ "$failed" = 0 ]; then
  echo "hygiene: no tracked file over 1 MB; every module is tidy; the Go builds share their module versions; no build compiles a kube-openapi that Go 1.27 breaks"
fi
exit "$failed"
