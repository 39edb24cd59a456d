# shellcheck shell=bash
# Sourced by the build scripts: phase_record adds one line to the phase report of the make test or
# make test-all that runs them (tests/phases/run.sh sets MINICLUSTER_FN_PHASES); run by hand, it
# does nothing.
#
#   phase_record KIND NAME SECONDS [HOW [CPU]]
#
# KIND is "build" for the builds cached per machine; HOW says "built" or "cached"; CPU, the CPU
# seconds the build's processes used (phase_cpu before and after it). One short line per call,
# appended: lines of builds running side by side do not mix. The build scripts take their lock with
# phase_lock and report a cache hit with phase_cached.
phase_record() {
  [ -n "${MINICLUSTER_FN_PHASES:-}" ] || return 0
  local how=${4:-}
  [ -z "${5:-}" ] || how="$how, $5 CPU-s"
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$how" >> "$MINICLUSTER_FN_PHASES"
}

# phase_cpu: the CPU seconds, user and system, of every child process the calling script has
# waited for so far (cutime and cstime of /proc/PID/stat, which count their own children too): a
# build's compilers and linkers. The wall seconds of a build at the lowest priority beside the tests
# say how long it waited for the CPU; these say what it cost, the figure to cut in a cold run.
phase_cpu() {
  awk -v hz="$(getconf CLK_TCK)" '{ printf "%d", ($16 + $17) / hz }' "/proc/$$/stat"
}

# phase_lock FD: takes the lock on file descriptor FD (one build of a key at a time per machine),
# and remembers how long that waited, for phase_cached.
phase_lock() {
  local start=$SECONDS
  flock "$1"
  phase_waited=$((SECONDS - start))
}

# phase_cached NAME: the line of a build found in the cache. One that found it only after waiting
# at the lock for the same build beside it says so: its seconds are mostly that build's.
phase_cached() {
  local how=cached
  if [ "${phase_waited:-0}" -gt 0 ]; then
    how="cached, after waiting ${phase_waited} s for the same build beside it"
  fi
  phase_record build "$1" "$SECONDS" "$how"
}
