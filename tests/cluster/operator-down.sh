#!/usr/bin/env bash
# Stops the Flux Framework operator's manager that operator-up.sh started from $STATE, and only
# that: the PID it recorded (SIGTERM, then SIGKILL after a grace period), whose pid file goes too.
# The cluster keeps running, with the operator's CRD, namespace and RBAC; down.sh, which runs this
# early, removes the rest. Exit status: 1 if the manager is still running afterwards.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/env.sh
. "$here/env.sh"
PROG="operator-down"
# shellcheck source=SCRIPTDIR/proc.sh
. "$here/proc.sh"

status=0
for name in "${OPERATOR_COMPONENTS[@]}"; do
  [ -f "$STATE/run/$name.pid" ] || continue
  stop_component "$name"
  if pid=$(recorded_pid "$name"); then
    echo "operator-down: FAILED: $name (PID $pid) is still running" >&2
    status=1
  else
    rm -f "$STATE/run/$name.pid"
  fi
done
exit "$status"
