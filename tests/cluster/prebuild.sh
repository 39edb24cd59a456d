#!/usr/bin/env bash
# Builds ahead, one after another, what the live tests need beside the node, each cached per machine
# by its own script: flux-core and flux-sched (the stand-in view's slow parts), Argo CD, Flux CD's
# controllers and CLI, the operator's manager. make test starts it in the background, at the lowest
# priority, as soon as make deps has installed the packages these builds need
# (tests/phases/run.sh); tests/live starts it when the cluster is up. Whoever needs a build while
# this one runs waits at that build's lock and then finds it cached.
#
# One after another, not side by side: what the tests need first is ready first, instead of
# everything at the end. A build that fails here is only reported: the test that needs it builds
# again and fails with the message. Exit status 0.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
images=$here/../images

for script in "$images/build-flux-core.sh" "$images/build-flux-sched.sh" "$here/build-argocd.sh" \
  "$here/build-fluxcd.sh" "$here/build-operator.sh"; do
  # stdout is the cache path; progress (prefixed by each script) goes to stderr.
  "$script" > /dev/null
  status=$?
  # Exit status 3 of build-operator.sh: the operator's source is absent (it says so); its tests skip.
  if [ "$status" != 0 ] && ! { [ "$status" = 3 ] && [ "$(basename "$script")" = build-operator.sh ]; }; then
    echo "prebuild: $(basename "$script") failed (exit $status); the test that needs it builds again" >&2
  fi
done
exit 0
