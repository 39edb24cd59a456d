#!/usr/bin/env bash
# Stops Kueue's manager that kueue-up.sh started from $STATE, and only that: the PID it recorded
# (SIGTERM, then SIGKILL after a grace period), whose pid file goes too; and removes the webhook
# configurations kueue-up.sh registered, so that no Job waits on a webhook nobody serves. The
# cluster keeps running, with Kueue's CRDs and the namespace kueue-system; down.sh, which runs this
# first, removes the rest. Exit status: 1 if the manager is still running afterwards or the webhooks
# could not be removed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/env.sh
. "$here/env.sh"
PROG="kueue-down"
# shellcheck source=SCRIPTDIR/proc.sh
. "$here/proc.sh"

status=0
if recorded_pid kube-apiserver > /dev/null && [ -f "$STATE/run/node-bin" ]; then
  "$(cat "$STATE/run/node-bin")/kubectl" --kubeconfig "$KUBECONFIG_ADMIN" delete --ignore-not-found \
    mutatingwebhookconfiguration/kueue-mutating-webhook-configuration \
    validatingwebhookconfiguration/kueue-validating-webhook-configuration > /dev/null || status=1
fi
stop_components "${KUEUE_COMPONENTS[@]}" || status=1
exit "$status"
