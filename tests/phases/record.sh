# shellcheck shell=bash
# Sourced by the build scripts: phase_record adds one line to the phase report of the make test or
# make test-all that runs them (tests/phases/run.sh sets MINICLUSTER_FN_PHASES); run by hand, it
# does nothing.
#
#   phase_record KIND NAME SECONDS [HOW]
#
# KIND is "build" for the builds cached per machine; HOW says "built" or "cached". One short line
# per call, appended: lines of builds running side by side do not mix.
phase_record() {
  [ -n "${MINICLUSTER_FN_PHASES:-}" ] || return 0
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${4:-}" >> "$MINICLUSTER_FN_PHASES"
}
