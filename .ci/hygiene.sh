#!/usr/bin/env bash
# hygiene: the repository holds sources, not build output, and every Go module is tidy.
#   - no file in the Git index is over 1 MB (1,000,000 bytes): binaries and downloads belong in bin/
#     or in caches, which .gitignore keeps out;
#   - `go mod tidy -diff` changes nothing in any module: every go.mod in the index is checked, so a
#     new module is covered without editing this script;
#   - tests/integration uses every module it shares with tools/node at tools/node's version (after
#     replace lines): then the live cluster's build reuses the Kubernetes packages the API-server
#     tests compiled (the Kubernetes part of the node build took 222 s instead of 671 s);
#   - the root module, tools/node/coredns and tools/node/containerd compile every module that two of
#     them share at one version: then CoreDNS and containerd reuse the client-go, API types, gRPC
#     and golang.org/x packages compiled before them (they are built with the root module's flags).
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

# go list -m all: "path version" or "path version => replacement version".
build_list() { (cd "$1" && go list -m -f '{{.Path}} {{with .Replace}}{{.Version}}{{else}}{{.Version}}{{end}}' all) | sort; }
mismatch=$(join <(build_list tools/node) <(build_list tests/integration) | awk '$2 != $3')
if [ -n "$mismatch" ]; then
  echo "hygiene: tests/integration and tools/node use these modules at different versions (module, tools/node, tests/integration):" >&2
  echo "$mismatch" >&2
  echo "hygiene: align tests/integration/go.mod with tools/node/go.mod, or the node build compiles Kubernetes twice" >&2
  failed=1
fi

# The modules whose packages a build compiles, as "path version"; the root module's with its tests.
compiled() { (cd "$1" && shift && CGO_ENABLED=0 go list -deps -f '{{with .Module}}{{if not .Main}}{{.Path}} {{.Version}}{{end}}{{end}}' "$@") | sort -u; }
declare -A built
built[root]=$(compiled . -test ./...)
built[coredns]=$(compiled tools/node/coredns .)
# The packages tests/cluster/build-node.sh builds, with its tags.
built[containerd]=$(compiled tools/node/containerd -tags 'no_btrfs no_devmapper no_zfs' \
  github.com/containerd/containerd/v2/cmd/containerd github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 \
  github.com/containerd/containerd/v2/cmd/ctr)
for pair in "root coredns" "root containerd" "coredns containerd"; do
  read -r a b <<< "$pair"
  mismatch=$(join <(echo "${built[$a]}") <(echo "${built[$b]}") | awk '$2 != $3')
  if [ -n "$mismatch" ]; then
    echo "hygiene: the $a and $b builds compile these modules at different versions (module, $a, $b):" >&2
    echo "$mismatch" >&2
    echo "hygiene: raise the lower one (go get module@version, then go mod tidy), or both compile its packages" >&2
    failed=1
  fi
done

if [ "$failed" = 0 ]; then
  echo "hygiene: no tracked file over 1 MB; every module is tidy; tests/integration matches tools/node; the root module, CoreDNS and containerd share their versions"
fi
exit "$failed"
