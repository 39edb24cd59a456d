#!/usr/bin/env bash
# Runs the steps of make test (or make test-all) one after another, each as `make STEP`, stops at
# the first that fails, and always ends with the phase report (report.sh): every step's seconds,
# every cached build's seconds and whether it came from the cache, every test package's and live
# test's seconds, and the total. CI logs then show where the time went.
#
#   tests/phases/run.sh TITLE [--beside STEP]... STEP...
#
# Each step's output is shown as it comes and kept in bin/phases/<step>.log, which the report reads
# for the tests' seconds; the builds add their own lines through record.sh. A step named with
# --beside does not take a turn in the sequence: it runs in the background at the lowest priority
# once the builds ahead have ended (beside.sh), in the CPU time the live tests leave idle, and the
# run waits for it at the end and shows its output if it failed. Exit status: the failed step's,
# else 0.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
title=$1
shift
beside_steps=()
while [ "${1:-}" = --beside ]; do
  beside_steps+=("$2")
  shift 2
done
dir=$repo/bin/phases
mkdir -p "$dir"
rm -f "$dir"/*.log "$dir/records.tsv" "$dir/report.txt"
export MINICLUSTER_FN_PHASES=$dir/records.tsv
: > "$MINICLUSTER_FN_PHASES"
# shellcheck source=tests/phases/step.sh
. "$repo/tests/phases/step.sh"

# The builds of what the live tests need beside the node (tests/cluster/prebuild.sh) start in the
# background once make deps has installed their packages, at the lowest priority (prebuild.sh says
# how): they take only what the steps leave idle, and the live tests find them cached or wait at
# their locks. MINICLUSTER_FN_PREBUILD=0 leaves them to the live suite (for comparing runs).
prebuild=""
# The steps beside the others (beside.sh), in a session of their own like the builds ahead.
beside=""

# stop_group PID WHAT: stops the process group PID leads (the builds ahead, the steps beside),
# if it still runs, and waits for it.
stop_group() {
  [ -n "$1" ] || return 0
  if kill -0 "$1" 2>/dev/null; then
    echo "run: stopping $2 (process group $1), still running" >&2
    kill -TERM -- "-$1" 2>/dev/null
    wait "$1" 2>/dev/null
  fi
}

# Transparent huge pages for the whole run, put back as they were at the end. The Go compiler and
# gcc never ask for huge pages (madvise), and on these VMs, with THP at "madvise", compiling spent a
# third of its CPU time in the kernel, mostly faulting in 4 KiB pages: with "always", a cold
# `go build ./cmd/minicluster-fn` took 59-74 s instead of 82-94 s, its system time half and its page
# faults an eighth (docs/testing.md). Only as root, and MINICLUSTER_FN_THP=0 leaves the setting alone.
# Only a run killed with SIGKILL cannot put the setting back.
thp=/sys/kernel/mm/transparent_hugepage/enabled
thp_before=""
if [ "${MINICLUSTER_FN_THP:-1}" != 0 ] && [ -w "$thp" ]; then
  thp_before=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$thp")
  if [ "$thp_before" = always ]; then
    thp_before=""
  elif echo always > "$thp"; then
    echo "run: transparent huge pages set to always for this run (they were $thp_before)" >&2
  else
    thp_before=""
  fi
fi
restore_thp() {
  [ -n "$thp_before" ] || return 0
  echo "$thp_before" > "$thp" && echo "run: transparent huge pages back to $thp_before" >&2
  thp_before=""
}

# The report ends every run: one that a step fails, and one that is interrupted.
status=0
begin=$(now)
running=""
finish() {
  trap - EXIT
  if [ -n "$running" ]; then
    printf 'step\t%s\t%s\t%s\n' "$running" "$(elapsed "$start")" "INTERRUPTED" >> "$MINICLUSTER_FN_PHASES"
  fi
  stop_group "$beside" "the steps beside: ${beside_steps[*]}"
  stop_group "$prebuild" "the builds ahead"
  restore_thp
  printf 'total\t%s\t%s\t%s\n' "$title" "$(elapsed "$begin")" "$([ "$status" = 0 ] && echo passed || echo FAILED)" \
    >> "$MINICLUSTER_FN_PHASES"
  bash "$repo/tests/phases/report.sh" "$dir" | tee "$dir/report.txt"
  exit "$status"
}
trap finish EXIT
trap 'status=130; exit' INT
trap 'status=143; exit' TERM

for step in "$@"; do
  start=$(now)
  running=$step
  run_step "$step" show
  status=$?
  running=""
  [ "$status" = 0 ] || break
  if [ "$step" = deps ] && [ "${MINICLUSTER_FN_PREBUILD:-1}" != 0 ] && [ -z "$prebuild" ]; then
    # setsid: the builds lead a process group of their own (its ID is their PID), which
    # stop_group stops whole. Their lines are marked, since they come between the steps'. The
    # marking outlives a Ctrl-C or a timeout's signal to this group, until the builds end: a build
    # whose output ended first would die of SIGPIPE without cleaning up.
    setsid "$repo/tests/cluster/prebuild.sh" > >(trap '' INT TERM; sed -u 's/^/[ahead] /' >&2) 2>&1 &
    prebuild=$!
    echo "run: building ahead in the background (tests/cluster/prebuild.sh, process group $prebuild)" >&2
  fi
  if [ "$step" = deps ] && [ "${#beside_steps[@]}" -gt 0 ] && [ -z "$beside" ]; then
    setsid "$repo/tests/phases/beside.sh" "$prebuild" "${beside_steps[@]}" &
    beside=$!
    echo "run: ${beside_steps[*]} beside the other steps, after the builds ahead (tests/phases/beside.sh, process group $beside)" >&2
  fi
done

# The steps beside: waited for once the others passed, their output shown if one failed.
if [ "$status" = 0 ] && [ -n "$beside" ]; then
  echo "run: waiting for the steps beside: ${beside_steps[*]}" >&2
  wait "$beside"
  status=$?
  beside=""
  for step in "${beside_steps[@]}"; do
    line=$(awk -F'\t' -v s="$step" '$1 == "step" && $2 == s { print $3 " s, " $4 }' "$MINICLUSTER_FN_PHASES")
    echo "run: $step: ${line:-did not run}" >&2
  done
  if [ "$status" != 0 ]; then
    for step in "${beside_steps[@]}"; do
      if awk -F'\t' -v s="$step" '$1 == "step" && $2 == s && $4 !~ /^passed/ { found = 1 } END { exit !found }' "$MINICLUSTER_FN_PHASES"; then
        echo "run: the output of $step ($dir/$step.log):" >&2
        cat "$dir/$step.log"
      fi
    done
  fi
fi
