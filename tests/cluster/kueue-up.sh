#!/usr/bin/env bash
# Runs Kueue's manager (tools/kueue, built once per machine by build-kueue.sh) as a host process
# against the running live-test cluster (make kueue-up): applies Kueue's CRDs server-side, creates
# the namespace kueue-system, makes the webhooks' serving certificate (signed by the cluster's CA,
# for 127.0.0.1), starts the manager, recorded by PID in $STATE/run with its log in $STATE/log like
# up.sh's components, and registers the webhooks it serves, called on the loopback. kueue-down.sh
# stops it and removes the webhooks; down.sh does too.
#
# Kueue acts only in namespaces labelled $KUEUE_NAMESPACE_LABEL=true (env.sh): its Job webhooks
# (failure policy Fail, as upstream's) and its Job reconciler skip every other namespace, so the
# other live tests' Jobs never depend on it. The tests create their own ResourceFlavors,
# ClusterQueues and LocalQueues.
#
# Exit status: 0 up; 1 no cluster runs from $STATE, Kueue runs already, or it failed to start
# (with the tail of its log; what this script started is stopped again).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/env.sh
. "$here/env.sh"
PROG="kueue-up"
# shellcheck source=SCRIPTDIR/proc.sh
. "$here/proc.sh"
# shellcheck source=SCRIPTDIR/node-config.sh
. "$here/node-config.sh"
need_cluster_without "${KUEUE_COMPONENTS[@]}"
for tool in jq openssl; do
  command -v "$tool" > /dev/null || { echo "$PROG: $tool is missing (make deps)" >&2; exit 1; }
done

say "manager (tests/cluster/build-kueue.sh; cached after the first build)"
kueue=$("$here/build-kueue.sh")

# --- CRDs, namespace, certificate, configuration -------------------------------------------------
say "CRDs, namespace kueue-system"
crds_established "$kueue/crds"
kubectl apply --server-side --field-manager=kueue-up -f - > /dev/null <<YAML
apiVersion: v1
kind: Namespace
metadata:
  name: kueue-system
  labels: {$KUEUE_NAMESPACE_LABEL: "true"}
YAML

# From here on a failure stops what was started (the CRDs and the namespace stay, like the
# cluster's other objects).
stop_on_failure "$here/kueue-down.sh"

data=$STATE/kueue
mkdir -p "$data/certs"
say "webhook certificate"
make_cert kueue-webhook "/CN=kueue-webhook" serverAuth "IP:127.0.0.1"
install -m 0600 "$pki/kueue-webhook.key" "$data/certs/tls.key"
install -m 0644 "$pki/kueue-webhook.crt" "$data/certs/tls.crt"

# Upstream's defaults but for what runs on the host: no internal certificate management (the
# certificate above), no leader election, the loopback's ports, the batch/Job integration only
# (the manager links no other), and the namespaces Kueue manages.
cat > "$data/config.yaml" <<YAML
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
health:
  healthProbeBindAddress: 127.0.0.1:$KUEUE_HEALTH_PORT
metrics:
  bindAddress: 127.0.0.1:$KUEUE_METRICS_PORT
webhook:
  host: 127.0.0.1
  port: $KUEUE_WEBHOOK_PORT
  certDir: $data/certs
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: false
manageJobsWithoutQueueName: false
managedJobsNamespaceSelector:
  matchLabels: {$KUEUE_NAMESPACE_LABEL: "true"}
integrations:
  frameworks: [batch/job]
YAML

# --- the manager ---------------------------------------------------------------------------------
say "kueue"
start kueue env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$data" KUBECONFIG="$KUBECONFIG_ADMIN" \
  "$kueue/bin/kueue" --config="$data/config.yaml"
wait_for kueue 60 curl -sf "http://127.0.0.1:$KUEUE_HEALTH_PORT/readyz"

# --- the webhooks --------------------------------------------------------------------------------
# Upstream's configurations (config/components/webhook, named as its install names them), with the
# webhooks this manager serves: Kueue's own kinds and batch/v1 Jobs. They reach it on the loopback
# with the cluster's CA instead of through a Service; the Job webhooks only in the managed
# namespaces.
say "webhooks"
ca=$(base64 -w0 < "$pki/ca.crt")
# kubectl prints the two configurations as two JSON documents: jq reads them as one array (-s).
kubectl create --dry-run=client -o json -f "$kueue/webhooks.yaml" |
  jq -s --arg base "https://127.0.0.1:$KUEUE_WEBHOOK_PORT" --arg ca "$ca" --arg nslabel "$KUEUE_NAMESPACE_LABEL" '
    {apiVersion: "v1", kind: "List", items: [.[] | (if .kind == "List" then .items[] else . end) |
      .metadata = {name: ("kueue-" + .metadata.name)} |
      .webhooks |= map(
        select(.rules | any(.apiGroups | any(. == "batch" or . == "kueue.x-k8s.io"))) |
        .clientConfig = {url: ($base + .clientConfig.service.path), caBundle: $ca} |
        if (.rules | any(.apiGroups | any(. == "batch")))
        then .namespaceSelector = {matchLabels: {($nslabel): "true"}} else . end)]}' |
  kubectl apply --server-side --field-manager=kueue-up -f - > /dev/null

# The API server calls the webhooks once it has read their configurations: a Job with a queue
# name, created as a server-side dry run in the managed namespace kueue-system, comes back
# suspended by Kueue's webhook.
probe_job="apiVersion: batch/v1
kind: Job
metadata:
  name: kueue-up-probe
  namespace: kueue-system
  labels: {kueue.x-k8s.io/queue-name: kueue-up-probe}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: probe, image: $PAUSE_IMAGE}]"
suspended_by_webhook() {
  [ "$(kubectl create --dry-run=server -o jsonpath='{.spec.suspend}' -f - <<< "$probe_job")" = true ]
}
wait_for kueue 30 suspended_by_webhook

trap - EXIT
say "Kueue up: log in $STATE/log/kueue.log; kueue-down.sh stops it"
