#!/usr/bin/env bash
# Runs Flux CD's source-controller and kustomize-controller (tools/fluxcd, built once per machine
# by build-fluxcd.sh) as host processes against the running live-test cluster (make fluxcd-up):
# applies their CRDs server-side, creates the namespace flux-system, and starts both, recorded by
# PID in $STATE/run with their logs in $STATE/log like up.sh's components. They watch all
# namespaces, without leader election, as the cluster's admin; source-controller keeps its
# artifacts in $STATE/fluxcd/storage and serves them on the loopback, where kustomize-controller
# fetches them (ports in env.sh). fluxcd-down.sh stops them; down.sh does too.
#
# Exit status: 0 up; 1 no cluster runs from $STATE, the controllers run already, or one failed to
# start (named, with the tail of its log; what this script started is stopped again).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/env.sh
. "$here/env.sh"
PROG="fluxcd-up"
# shellcheck source=SCRIPTDIR/proc.sh
. "$here/proc.sh"
need_cluster_without "${FLUXCD_COMPONENTS[@]}"

say "controllers (tests/cluster/build-fluxcd.sh; cached after the first build)"
fluxcd=$("$here/build-fluxcd.sh")

# --- CRDs and namespace --------------------------------------------------------------------------
# kustomize-controller does not start without the source kinds' CRDs.
say "CRDs"
crds_established "$fluxcd/crds"
kubectl apply --server-side -f - > /dev/null <<EOF
apiVersion: v1
kind: Namespace
metadata: {name: flux-system}
EOF

# --- the controllers -----------------------------------------------------------------------------
# From here on a failure stops what was started (the CRDs and the namespace stay, like the
# cluster's other objects).
stop_on_failure "$here/fluxcd-down.sh"

data=$STATE/fluxcd
mkdir -p "$data/storage" "$data/home" "$data/tmp"
# The same environment whoever starts them: the admin kubeconfig (they have no --kubeconfig flag),
# the namespace an in-cluster deployment gets from the downward API, and a HOME and TMPDIR of their
# own, so that they read none of the caller's credentials (~/.docker/config.json, ~/.gitconfig),
# keep sigstore's cache (~/.sigstore) and their checkouts under $STATE, and purge nobody else's
# temporary directories (kustomize-controller removes every kustomization-* in TMPDIR at start).
fluxcd_env=(env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$data/home" TMPDIR="$data/tmp"
  KUBECONFIG="$KUBECONFIG_ADMIN" RUNTIME_NAMESPACE=flux-system)

say "source-controller, kustomize-controller"
start source-controller "${fluxcd_env[@]}" "$fluxcd/bin/source-controller" --watch-all-namespaces \
  --metrics-addr="127.0.0.1:$SOURCE_CONTROLLER_METRICS_PORT" --health-addr="127.0.0.1:$SOURCE_CONTROLLER_HEALTH_PORT" \
  --storage-addr="127.0.0.1:$SOURCE_CONTROLLER_STORAGE_PORT" --storage-adv-addr="127.0.0.1:$SOURCE_CONTROLLER_STORAGE_PORT" \
  --storage-path="$data/storage"
# --concurrent: the Kustomizations it reconciles at once. A health check holds its worker until the
# objects are healthy or the Kustomization's timeout ends (a batch MiniCluster's, while its Job
# runs; one that checks a deleted certificate, all of its timeout), and the live tests run four Flux
# CD tests side by side, each with Kustomizations of its own: with upstream's default of 4, one
# test's reconcile request can queue behind the others' health checks, which is the test's wait
# timing out, not the behaviour it checks. A cluster with as many Kustomizations would raise it too
# (https://fluxcd.io/flux/installation/configuration/vertical-scaling).
start kustomize-controller "${fluxcd_env[@]}" "$fluxcd/bin/kustomize-controller" --watch-all-namespaces \
  --concurrent=16 \
  --metrics-addr="127.0.0.1:$KUSTOMIZE_CONTROLLER_METRICS_PORT" --health-addr="127.0.0.1:$KUSTOMIZE_CONTROLLER_HEALTH_PORT"

# source-controller is ready when its manager is (/readyz) and its artifact server answers (an
# in-cluster deployment's readiness probe checks the latter).
source_ready() {
  curl -sf "http://127.0.0.1:$SOURCE_CONTROLLER_HEALTH_PORT/readyz" &&
    curl -sf "http://127.0.0.1:$SOURCE_CONTROLLER_STORAGE_PORT/"
}
wait_for source-controller 60 source_ready
wait_for kustomize-controller 60 curl -sf "http://127.0.0.1:$KUSTOMIZE_CONTROLLER_HEALTH_PORT/readyz"

trap - EXIT
say "Flux CD up: logs in $STATE/log/{source,kustomize}-controller.log; fluxcd-down.sh stops it"
