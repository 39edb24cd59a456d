#!/usr/bin/env bash
# Runs the steps of make test (or make test-all) one after another, each as `make STEP`, stops at
# the first that fails, and always ends with the phase report (report.sh): every step's seconds,
# every cached build's seconds and whether it came from the cache, every test package's and live
# test's seconds, and the total. CI logs then show where the time went.
#
#   tests/phases/run.sh TITLE STEP...
#
# Each step's output is shown as it comes and kept in bin/phases/<step>.log, which the report reads
# for the tests' seconds; the builds add their own lines through record.sh. Exit status: the failed
# step's, else 0.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
title=$1
shift
dir=$repo/bin/phases
mkdir -p "$dir"
rm -f "$dir"/*.log "$dir/records.tsv" "$dir/report.txt"
export MINICLUSTER_FN_PHASES=$dir/records.tsv
: > "$MINICLUSTER_FN_PHASES"

# Seconds since the epoch with tenths, from bash alone.
now() { printf '%s' "${EPOCHREALTIME%?????}"; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
# The machine's busy CPU time and its total, in clock ticks (/proc/stat), so that each step's line
# says how busy the machine was: a step that leaves cores idle is one that builds can run beside.
cpu() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8, $2 + $3 + $4 + $5 + $6 + $7 + $8 }' /proc/stat; }
busy() { # busy BEFORE (two numbers): "busy N% of M cores"
  read -r b1 t1 <<< "$1"
  read -r b2 t2 <<< "$(cpu)"
  awk -v b="$((b2 - b1))" -v t="$((t2 - t1))" -v n="$(nproc)" \
    'BEGIN { printf "machine busy %d%% of %d cores", (t > 0 ? 100 * b / t : 0), n }'
}

# The builds of what the live tests need beside the node (tests/cluster/prebuild.sh) start in the
# background once make deps has installed their packages, at the lowest priority (prebuild.sh says
# how): they take only what the steps leave idle, and the live tests find them cached or wait at
# their locks. MINICLUSTER_FN_PREBUILD=0 leaves them to the live suite (for comparing runs).
prebuild=""
stop_prebuild() {
  [ -n "$prebuild" ] || return 0
  if kill -0 "$prebuild" 2>/dev/null; then
    echo "run: stopping the builds ahead (process group $prebuild), still running" >&2
    kill -TERM -- "-$prebuild" 2>/dev/null
    wait "$prebuild" 2>/dev/null
  fi
  prebuild=""
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
  stop_prebuild
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
  ticks=$(cpu)
  running=$step
  # The step runs under a shell of its own that writes the CPU seconds of the step's processes
  # when it ends (phase_cpu): this script's own count would also take in the builds ahead, whenever
  # they end. The pods' processes, children of the container runtime, are not among them.
  bash -c '. "$1"; shift; "$@"; status=$?; phase_cpu > "$MINICLUSTER_FN_PHASES.cpu"; exit $status' \
    step "$repo/tests/phases/record.sh" "${MAKE:-make}" --no-print-directory "$step" 2>&1 | tee "$dir/$step.log"
  status=${PIPESTATUS[0]}
  running=""
  printf 'step\t%s\t%s\t%s\n' "$step" "$(elapsed "$start")" \
    "$([ "$status" = 0 ] && echo passed || echo "FAILED (exit $status)"), $(busy "$ticks"), $(cat "$MINICLUSTER_FN_PHASES.cpu" 2>/dev/null || echo ?) CPU-s of its own" >> "$MINICLUSTER_FN_PHASES"
  rm -f "$MINICLUSTER_FN_PHASES.cpu"
  [ "$status" = 0 ] || break
  if [ "$step" = deps ] && [ "${MINICLUSTER_FN_PREBUILD:-1}" != 0 ] && [ -z "$prebuild" ]; then
    # setsid: the builds lead a process group of their own (its ID is their PID), which
    # stop_prebuild stops whole. Their lines are marked, since they come between the steps'. The
    # marking outlives a Ctrl-C or a timeout's signal to this group, until the builds end: a build
    # whose output ended first would die of SIGPIPE without cleaning up.
    setsid "$repo/tests/cluster/prebuild.sh" > >(trap '' INT TERM; sed -u 's/^/[ahead] /' >&2) 2>&1 &
    prebuild=$!
    echo "run: building ahead in the background (tests/cluster/prebuild.sh, process group $prebuild)" >&2
  fi
done
