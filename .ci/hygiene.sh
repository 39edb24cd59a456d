#!/usr/bin/env bash
# hygiene: the repository holds sources, not build output, and every Go module is tidy.
#   - no file in the Git index is over 1 MB (1,000,000 bytes): binaries and downloads belong in bin/
#     or in caches, which .gitignore keeps out;
#   - `go mod tidy -diff` changes nothing in any module: every go.mod in the index is checked, so a
#     new module is covered without editing this script.
set -euo pipefail
cd "$(dirname "$0")/.."

limit=1000000
failed=0

# The index's blob sizes, not the work tree's: what a commit would contain is what counts.
while read -r _ object _ path; do
  size=$(git cat-file -s "$object")
  if [ "$size" -gt "$limit" ]; then
    echo "hygiene: $path is $size bytes in the Git index, over 1 MB: build or download it instead of committing it" >&2
    failed=1
  fi
done < <(git ls-files --stage)

# tests/operator/oracle builds against the operator's source, which ../shared/vendor holds and which
# must not be committed: its go.mod replaces the operator with ./flux-operator, so it is checked in
# a scratch copy with the source unpacked there, as the operator-diff test builds it.
oracle_tarball=../shared/vendor/flux-operator-0d75cef8.tar.gz
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

tidy_diff() {
  local dir=$1
  if [ "$dir" = tests/operator/oracle ]; then
    if [ ! -f "$oracle_tarball" ]; then
      echo "hygiene: SKIPPED go mod tidy in $dir: $oracle_tarball is missing" >&2
      return 0
    fi
    cp -r "$dir" "$scratch/oracle"
    mkdir "$scratch/oracle/flux-operator"
    tar -xzf "$oracle_tarball" -C "$scratch/oracle/flux-operator" --strip-components=1
    (cd "$scratch/oracle" && go mod tidy -diff 2>&1)
    return
  fi
  (cd "$dir" && go mod tidy -diff 2>&1)
}

while IFS= read -r -d '' gomod; do
  dir=$(dirname "$gomod")
  if ! diff=$(tidy_diff "$dir"); then
    echo "hygiene: go mod tidy would change $dir (run: cd $dir && go mod tidy):" >&2
    printf '%s\n' "$diff" >&2
    failed=1
  fi
done < <(git ls-files -z '*go.mod')

if [ "$failed" = 0 ]; then
  echo "hygiene: no tracked file over 1 MB; every module is tidy"
fi
exit "$failed"
