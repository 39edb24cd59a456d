# shellcheck shell=bash
# Sourced by run.sh and beside.sh: runs one step of make test (or make test-all) as `make STEP` and
# adds its line to the phase report. Needs repo, dir (bin/phases) and MINICLUSTER_FN_PHASES.
#
#   run_step STEP show|quiet [NOTE]
#
# The step's output goes to bin/phases/<step>.log, which the report reads for the tests' seconds,
# and with "show" to stdout as well. Its line: seconds, passed or FAILED, how busy the machine was
# meanwhile, the CPU seconds of its own processes, and NOTE. Returns the step's exit status.

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

# shellcheck disable=SC2154 # repo and dir are the sourcing script's
run_step() {
  local step=$1 show=$2 note=${3:+, $3} start ticks status cpu_file
  start=$(now)
  ticks=$(cpu)
  cpu_file=$MINICLUSTER_FN_PHASES.$step.cpu
  # The step runs under a shell of its own that writes the CPU seconds of the step's processes
  # when it ends (phase_cpu): the caller's own count would also take in whatever else it started
  # (the builds ahead, the steps beside), whenever they end. The pods' processes, children of the
  # container runtime, are not among them.
  # shellcheck disable=SC2016 # expanded by that shell
  local cmd=(bash -c '. "$1"; f=$2; shift 2; "$@"; status=$?; phase_cpu > "$f"; exit $status'
    step "$repo/tests/phases/record.sh" "$cpu_file" "${MAKE:-make}" --no-print-directory "$step")
  if [ "$show" = show ]; then
    "${cmd[@]}" 2>&1 | tee "$dir/$step.log"
    status=${PIPESTATUS[0]}
  else
    "${cmd[@]}" > "$dir/$step.log" 2>&1
    status=$?
  fi
  printf 'step\t%s\t%s\t%s\n' "$step" "$(elapsed "$start")" \
    "$([ "$status" = 0 ] && echo passed || echo "FAILED (exit $status)"), $(busy "$ticks"), $(cat "$cpu_file" 2>/dev/null || echo ?) CPU-s of its own$note" >> "$MINICLUSTER_FN_PHASES"
  rm -f "$cpu_file"
  return "$status"
}
