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

stop_components "${FLUXCD_COMPONENTS[@]}"
