#!/usr/bin/env bash
# Runs steps of make test (or make test-all) beside the others, one after another, at the lowest
# priority, once the builds ahead have ended (tests/phases/run.sh --beside):
#
#   tests/phases/beside.sh AHEAD_PID STEP...
#
# AHEAD_PID is tests/cluster/prebuild.sh's (empty: none). Steps that only compute (the fuzzers,
# the release's cross-compiles) take the CPU that the live tests leave idle while they wait for
# their pods, instead of a slot of their own in the sequence; they wait for the builds ahead, which
# the live tests need first. Each step's output goes to bin/phases/<step>.log only (run.sh shows
# it at the end when the step failed); its line in the phase report says when it started.
# Stops at the first step that fails. Exit status: that step's, else 0.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
dir=$repo/bin/phases
ahead=$1
shift
# shellcheck source=tests/phases/step.sh
. "$repo/tests/phases/step.sh"

# The lowest priority, as prebuild.sh takes it: where the kernel groups processes by session to
# share the CPU (sched_autogroup_enabled), the session's own priority, since run.sh starts this
# script in a session of its own.
if [ "$(ps -o sid= -p $$ | tr -d ' ')" = $$ ] && [ -w /proc/self/autogroup ]; then
  echo 19 > /proc/self/autogroup
fi
renice -n 19 -p $$ > /dev/null

begin=$(now)
while [ -n "$ahead" ] && kill -0 "$ahead" 2>/dev/null; do
  sleep 2
done
for step in "$@"; do
  running=$step
  started=$(now)
  trap 'printf "step\t%s\t%s\t%s\n" "$running" "$(elapsed "$started")" "INTERRUPTED (beside the other steps)" >> "$MINICLUSTER_FN_PHASES"; exit 143' TERM
  run_step "$step" quiet "beside the other steps, started $(elapsed "$begin") s after deps" || exit
  trap - TERM
done
