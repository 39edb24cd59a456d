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
# and remembers how long that waited, for phase_cached. The holder of a lock writes its PID beside
# it (LOCK.holder), so that a caller that has to wait can raise the build it waits for to its own
# priority (phase_raise): a build ahead runs at the lowest priority (tests/cluster/prebuild.sh),
# and a test that needs it must not wait behind every other test for the CPU.
phase_lock() {
  local start=$SECONDS lock
  lock=$(readlink "/proc/$$/fd/$1")
  if ! flock -n "$1"; then
    phase_raise "$lock"
    flock "$1"
  fi
  phase_waited=$((SECONDS - start))
  echo "$$" > "$lock.holder"
}

# phase_raise LOCK: the process holding LOCK, and every process under it, from now on at the
# caller's priority where theirs is lower: their nice values, and their session's (where the kernel
# shares the CPU between sessions first, sched_autogroup, a nice value ranks a process only within
# its session; prebuild.sh lowers its session's and sets it again before each build). Never lowers
# a priority. Needs root to raise one; without, it changes nothing.
phase_raise() {
  local holder mine group theirs pid
  holder=$(cat "$1.holder" 2>/dev/null) || return 0
  [[ "$holder" =~ ^[0-9]+$ ]] || return 0
  # A PID written by an earlier holder may belong to another process by now: only the one that has
  # this lock file open is raised.
  find "/proc/$holder/fd" -lname "$1" 2>/dev/null | grep -q . || return 0
  mine=$(ps -o ni= -p $$ | tr -d ' ')
  if [ -w "/proc/$holder/autogroup" ] && [ -r "/proc/$$/autogroup" ]; then
    group=$(awk '{ print $3 }' "/proc/$$/autogroup")
    theirs=$(awk '{ print $3 }' "/proc/$holder/autogroup")
    if [ -n "$group" ] && [ -n "$theirs" ] && [ "$theirs" -gt "$group" ]; then
      echo "$group" > "/proc/$holder/autogroup" 2>/dev/null || true
    fi
  fi
  # The holder and its descendants, parents first: a process started after its parent was raised
  # inherits the new value.
  ps -e -o pid=,ppid=,ni= | awk -v root="$holder" -v mine="$mine" '
    { parent[$1] = $2; nice[$1] = $3; order[NR] = $1 }
    END {
      keep[root] = 1
      for (changed = 1; changed; ) {
        changed = 0
        for (i = 1; i <= NR; i++) { p = order[i]; if (!(p in keep) && (parent[p] in keep)) { keep[p] = 1; changed = 1 } }
      }
      for (p in keep) if (nice[p] > mine) print p
    }' | while read -r pid; do
    renice -n "$mine" -p "$pid" > /dev/null 2>&1 || true
  done
  echo "$(basename "$0"): waiting for the same build (PID $holder), now at this caller's priority" >&2
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
