#!/usr/bin/env bash
# Prints the phase report of a make test or make test-all run (run.sh calls it at the end):
#
#   tests/phases/report.sh DIR     (DIR: bin/phases, with records.tsv and one <step>.log per step)
#
# From records.tsv: the steps, the builds cached per machine (built, or from the cache), what the
# live suite waited for (the cluster, the images, each component beside the cluster) and the total.
# From the steps' logs: the seconds of each test package (go test's "ok"/"FAIL" lines) and of each
# top-level live test (go test -v's "--- PASS/FAIL/SKIP" lines at the start of a line).
set -euo pipefail
dir=${1:?usage: report.sh DIR}
records=$dir/records.tsv

minutes() { awk -v s="$1" 'BEGIN { printf "%dm%02ds", int(s / 60), int(s) % 60 }'; }

total=$(awk -F'\t' '$1 == "total" { print $2 "\t" $3 "\t" $4 }' "$records" | tail -n1)
IFS=$'\t' read -r title seconds result <<< "${total:-make	0	unfinished}"
echo
echo "==== phase report: $title, $result in $seconds s ($(minutes "$seconds")) ===="

section() {
  local kind=$1 heading=$2
  awk -F'\t' -v k="$kind" '$1 == k' "$records" | grep -q . || return 0
  echo "$heading"
  awk -F'\t' -v k="$kind" '$1 == k { printf "  %-44s %8.1f s  %s\n", $2, $3, $4 }' "$records"
}
section step "steps (make STEP, in order):"
section build "builds cached per machine (in the order they ended):"
section live "live suite setup (what the tests waited for):"

# go test's package lines: "ok  <pkg> 12.3s", "FAIL <pkg> 12.3s", in every step's log.
packages=$(for log in "$dir"/*.log; do
  step=$(basename "$log" .log)
  awk -v step="$step" '/^(ok|FAIL)[ \t]+[^ \t]+[ \t]+[0-9.]+s/ {
    s = $3; sub(/s$/, "", s); printf "%s\t%s\t%s\t%s\n", s, step, $2, $1 }' "$log"
done | sort -t$'\t' -k1,1gr)
if [ -n "$packages" ]; then
  echo "test packages (slowest first; step, package):"
  awk -F'\t' '{ printf "  %-12s %-58s %8.1f s  %s\n", $2, $3, $1, $4 }' <<< "$packages"
fi

# Top-level tests of the verbose live run: subtests' lines are indented.
if [ -f "$dir/live.log" ]; then
  tests=$(awk '/^--- (PASS|FAIL|SKIP): [^ ]+ \([0-9.]+s\)/ {
    s = $4; gsub(/[()s]/, "", s); r = $2; sub(/:$/, "", r); printf "%s\t%s\t%s\n", s, $3, r }' "$dir/live.log" \
    | sort -t$'\t' -k1,1gr)
  if [ -n "$tests" ]; then
    echo "live tests (slowest first):"
    awk -F'\t' '{ printf "  %-44s %8.1f s  %s\n", $2, $1, $3 }' <<< "$tests"
  fi
fi
echo "total: $seconds s ($(minutes "$seconds")), $result"
