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

stop_components "${OPERATOR_COMPONENTS[@]}"
