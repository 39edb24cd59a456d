#!/usr/bin/env bash
# Measures how late the kubelet writes a ConfigMap into an optional configMap volume that was
# mounted before the ConfigMap existed: the design question of docs/benchmarks.md ("The kubelet's
# back-off on the certificate volume"). Runs on the live-test cluster (make cluster-up; the app
# stand-in image loaded with tests/cluster/load-image.sh bin/test-images/app.tar).
#
#   tests/bench/optional-configmap.sh [RUNS]
#
# Each run creates a pod whose init container sleeps 3 s (as the broker's copy of the view does)
# and whose container waits for /cfg/key, then creates the ConfigMap at one of two moments:
#   early: 1 s after the pod, while the init container runs (the certificate's usual latency);
#   late:  after the container started (a slow keygen pod, or the worst apply order).
# It prints, per run, when the container saw the file.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/../cluster/env.sh
. "$here/../cluster/env.sh"
runs=${1:-3}
image=localhost/minicluster-fn-test/app:bookworm
ns=bench-optional-cm
kc() { kubectl --kubeconfig "$KUBECONFIG_ADMIN" -n "$ns" "$@"; }
now() { date +%s.%N; }

kubectl --kubeconfig "$KUBECONFIG_ADMIN" create namespace "$ns" >/dev/null
trap 'kubectl --kubeconfig "$KUBECONFIG_ADMIN" delete namespace "$ns" --wait=false >/dev/null' EXIT

pod() {
  cat <<YAML
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 1
  initContainers:
  - {name: copy, image: $image, imagePullPolicy: Never, command: [sleep, "3"]}
  containers:
  - name: wait
    image: $image
    imagePullPolicy: Never
    command: [bash, -c, 'echo "started \$(date +%s.%N)"; until [ -e /cfg/key ]; do sleep 0.05; done; echo "seen \$(date +%s.%N)"']
    volumeMounts: [{name: cfg, mountPath: /cfg}]
  volumes:
  - name: cfg
    configMap: {name: $1, optional: true}
YAML
}

# report POD CREATED: waits for the pod to finish and prints when its container saw the file,
# from the ConfigMap's creation and from the container's start.
report() {
  kc wait --for=jsonpath='{.status.phase}'=Succeeded "pod/$1" --timeout=300s >/dev/null
  read -r started seen < <(kc logs "$1" -c wait | awk '{t[$1] = $2} END {print t["started"], t["seen"]}')
  printf '%s: file seen %.2f s after the ConfigMap was created, %.2f s after the container started\n' \
    "$1" "$(echo "$seen - $2" | bc)" "$(echo "$seen - $started" | bc)"
}

for i in $(seq "$runs"); do
  name=early-$i
  pod "$name" | kc apply -f - >/dev/null
  sleep 1
  created=$(now); kc create configmap "$name" --from-literal=key=x >/dev/null
  report "$name" "$created"

  name=late-$i
  pod "$name" | kc apply -f - >/dev/null
  until kc logs "$name" -c wait 2>/dev/null | grep -q '^started'; do sleep 0.2; done
  created=$(now); kc create configmap "$name" --from-literal=key=x >/dev/null
  report "$name" "$created"
done
