#!/usr/bin/env bash
# Runs the Flux Framework operator's manager (built once per machine by build-operator.sh, from
# ../shared/vendor, with its real keygen) as a host process against the running live-test cluster
# (make operator-up): applies its MiniCluster CRD server-side, and the RBAC of its config/ as its
# config/default installs it (namespace operator-system, ServiceAccount
# operator-controller-manager bound to the ClusterRole operator-manager-role). The manager runs
# with that ServiceAccount's token, not as the cluster's admin, so it has exactly the rights its
# own deployment would have; without leader election, metrics and health on the loopback (ports
# in env.sh), recorded by PID in $STATE/run with its log in $STATE/log like up.sh's components.
# operator-down.sh stops it; down.sh does too.
#
# Exit status: 0 up; 1 no cluster runs from $STATE, the manager runs already, or it failed to
# start (with the tail of its log; what this script started is stopped again); 3 the operator's
# source is absent (../shared).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/env.sh
. "$here/env.sh"
PROG="operator-up"
# shellcheck source=SCRIPTDIR/proc.sh
. "$here/proc.sh"
need_cluster_without "${OPERATOR_COMPONENTS[@]}"

say "manager (tests/cluster/build-operator.sh; cached after the first build)"
operator=$("$here/build-operator.sh")

# --- CRD and RBAC --------------------------------------------------------------------------------
say "CRD, namespace, RBAC"
crd=$operator/config/crd/bases/flux-framework.org_miniclusters.yaml
crds_established "$crd"
data=$STATE/operator
mkdir -p "$data/home" "$data/rbac"
# config/rbac's manager objects with what config/default adds (its namespace and name prefix),
# built by kubectl's own kustomize from copies (kustomize reads no files outside its directory).
cp "$operator"/config/rbac/{role.yaml,role_binding.yaml,service_account.yaml} "$data/rbac/"
cat > "$data/rbac/kustomization.yaml" <<'KUST'
namespace: operator-system
namePrefix: operator-
resources: [role.yaml, role_binding.yaml, service_account.yaml]
KUST
kubectl apply --server-side -f - > /dev/null <<'NS'
apiVersion: v1
kind: Namespace
metadata: {name: operator-system}
NS
kubectl apply --server-side -k "$data/rbac" > /dev/null

# --- the manager ---------------------------------------------------------------------------------
# A kubeconfig with the ServiceAccount's token (valid for a day: longer than any test run).
token=$(kubectl -n operator-system create token operator-controller-manager --duration=24h)
server=$(kubectl config view --raw -o jsonpath='{.clusters[0].cluster.server}')
ca=$(kubectl config view --raw --flatten -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')
umask 077
cat > "$data/kubeconfig" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters: [{name: live, cluster: {server: "$server", certificate-authority-data: "$ca"}}]
users: [{name: operator-controller-manager, user: {token: "$token"}}]
contexts: [{name: operator, context: {cluster: live, user: operator-controller-manager}}]
current-context: operator
KUBECONFIG
umask 022

stop_on_failure "$here/operator-down.sh"

say "flux-operator"
start flux-operator env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$data/home" KUBECONFIG="$data/kubeconfig" \
  "$operator/manager" --metrics-bind-address="127.0.0.1:$OPERATOR_METRICS_PORT" \
  --health-probe-bind-address="127.0.0.1:$OPERATOR_HEALTH_PORT"
wait_for flux-operator 60 curl -sf "http://127.0.0.1:$OPERATOR_HEALTH_PORT/readyz"

trap - EXIT
say "operator up: log in $STATE/log/flux-operator.log; operator-down.sh stops it"
