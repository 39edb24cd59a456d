#!/usr/bin/env bash
# Runs a command that uses the live-test cluster (make live, make bench-live, make bench-sidebyside):
#
#   tests/cluster/with-cluster.sh COMMAND [ARG...]
#
# The command brings the cluster up itself when none is running (tests/live's TestMain runs up.sh)
# and takes down what it started. A test binary that dies (a -timeout panic, a signal) never gets
# there: so when no cluster from $STATE was running before, this script runs down.sh after the
# command, whatever became of it, and a run that started with no cluster ends with none. A cluster
# that was running before (make cluster-up) is left running. Exit status: the command's, or 1 if
# the teardown failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/env.sh
. "$here/env.sh"

# Running: a PID that up.sh recorded is alive (as up.sh itself decides).
running_before=""
for f in "$STATE"/run/*.pid; do
  [ -e "$f" ] || continue
  read -r pid _ < "$f"
  if kill -0 "$pid" 2>/dev/null; then
    running_before=$f
    break
  fi
done

if [ -n "$running_before" ]; then
  echo "with-cluster: a cluster from $STATE is running ($(basename "$running_before" .pid)); it is left running" >&2
  exec "$@"
fi

teardown() {
  local status=$?
  trap - EXIT INT TERM
  if ! "$here/down.sh"; then
    echo "with-cluster: TEARDOWN FAILED (tests/cluster/down.sh above names what is left)" >&2
    status=1
  fi
  exit "$status"
}
trap teardown EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
"$@"
