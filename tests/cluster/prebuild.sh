#!/usr/bin/env bash
# Builds ahead, one after another, what the live tests need beside the node, each cached per machine
# by its own script: the stand-in images (flux-core, flux-sched and the flux view), the operator's
# manager, Flux CD's controllers and CLI, Argo CD (and for make test-all Kueue), at the lowest
# priority. make test starts it in the
# background as soon as make deps has installed the packages these builds need (tests/phases/run.sh);
# tests/live starts it when the cluster is up. Whoever needs a build while
# this one runs waits at that build's lock and then finds it cached.
#
# One after another, not side by side: what the tests need first is ready first, instead of
# everything at the end. A build that fails here is only reported: the test that needs it builds
# again and fails with the message. Exit status 0.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
images=$here/../images

# Only what the machine leaves idle. Where the kernel groups processes by session to share the CPU
# (sched_autogroup_enabled, as on these VMs), a process's nice value ranks it only within its own
# session, and a session of its own (setsid, as make test and tests/live start this script) gets
# as much CPU as the session running the tests: so the session's own priority is lowered, never the
# caller's (only when this script leads its session).
if [ "$(ps -o sid= -p $$ | tr -d ' ')" = $$ ] && [ -w /proc/self/autogroup ]; then
  echo 19 > /proc/self/autogroup
fi
renice -n 19 -p $$ > /dev/null

# The stand-in images first (flux-core, then flux-sched, then the view): every test with brokers
# needs them. Then the components of the tests that run last, side by side, the shortest build
# first (the operator's manager takes seconds once the operator oracle is built; Argo CD's build is
# the longest): their tests can start while the next builds.
scripts=("$images/build-view.sh" "$here/build-operator.sh" "$here/build-fluxcd.sh" "$here/build-argocd.sh")
# Kueue's tests are part of make test-all only (MINICLUSTER_FN_LIVE_ALL=1): make test builds no Kueue.
[ "${MINICLUSTER_FN_LIVE_ALL:-}" != 1 ] || scripts+=("$here/build-kueue.sh")
for script in "${scripts[@]}"; do
  # stdout is the cache path; progress (prefixed by each script) goes to stderr.
  "$script" > /dev/null
  status=$?
  # Exit status 3 of build-operator.sh: the operator's source is absent (it says so); its tests skip.
  if [ "$status" != 0 ] && ! { [ "$status" = 3 ] && [ "$(basename "$script")" = build-operator.sh ]; }; then
    echo "prebuild: $(basename "$script") failed (exit $status); the test that needs it builds again" >&2
  fi
done
exit 0
