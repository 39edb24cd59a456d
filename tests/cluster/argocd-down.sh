#!/usr/bin/env bash
# Stops Argo CD's components that argocd-up.sh started from $STATE, and only those: the PIDs it
# recorded (SIGTERM, then SIGKILL after a grace period), in the reverse of their start order, whose
# pid files go too. The cluster keeps running, with the CRDs, the namespace argocd and its
# objects; down.sh, which runs this first, removes the rest. Exit status: 1 if a component is
# still running afterwards.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/env.sh
. "$here/env.sh"
PROG="argocd-down"
# shellcheck source=SCRIPTDIR/proc.sh
. "$here/proc.sh"

stop_components "${ARGOCD_COMPONENTS[@]}"
