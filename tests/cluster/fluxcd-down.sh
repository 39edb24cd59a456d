#!/usr/bin/env bash
# Stops Flux CD's controllers that fluxcd-up.sh started from $STATE, and only those: the PIDs it
# recorded (SIGTERM, then SIGKILL after a grace period), whose pid files go too. The cluster keeps
# running, with the CRDs, the namespace flux-system and source-controller's storage
# ($STATE/fluxcd); down.sh, which runs this first, removes the rest. Exit status: 1 if a controller
# is still running afterwards.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/env.sh
. "$here/env.sh"
PROG="fluxcd-down"
# shellcheck source=SCRIPTDIR/proc.sh
. "$here/proc.sh"

status=0
for ((i = ${#FLUXCD_COMPONENTS[@]} - 1; i >= 0; i--)); do
  name=${FLUXCD_COMPONENTS[i]}
  [ -f "$STATE/run/$name.pid" ] || continue
  stop_component "$name"
  if pid=$(recorded_pid "$name"); then
    echo "fluxcd-down: FAILED: $name (PID $pid) is still running" >&2
    status=1
  else
    rm -f "$STATE/run/$name.pid"
  fi
done
exit "$status"
