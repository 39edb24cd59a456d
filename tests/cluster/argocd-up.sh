#!/usr/bin/env bash
# Runs Argo CD's application controller, repo server and config management plugin (CMP) server
# (tools/argocd, built once per machine by build-argocd.sh) with Debian's redis, as host processes
# against the running live-test cluster (make argocd-up), as Argo CD's own Procfile runs them for
# its developers: applies the CRDs of the same version server-side, creates the namespace argocd
# with what an install has in it (argocd-cm, argocd-secret, the AppProject default), and starts the
# four, recorded by PID in $STATE/run with their logs in $STATE/log like up.sh's components.
# argocd-down.sh stops them; down.sh does too.
#
# The two containers of a repo-server pod are two directories here, each with the tools its
# container has on PATH:
#   $STATE/argocd/repo-server/bin   kustomize (Argo CD's image has it) and minicluster-fn (what the
#                                   example's init container installs in /usr/local/bin)
#   $STATE/argocd/cmp-server/bin    the same two, for the plugin sidecar; its plugin.yaml is
#                                   examples/argocd/cmp/plugin.yaml, in $STATE/argocd/cmp-server/config
# They come from $KUSTOMIZE and $MINICLUSTER_FN (default: the checkout's bin/). The repo server
# reaches the plugin over its socket in $STATE/argocd/plugins, as over the pod's shared volume.
#
# Exit status: 0 up; 1 no cluster runs from $STATE, the components run already, a tool is
# missing, or one failed to start (named, with the tail of its log; what this script started is
# stopped again).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=SCRIPTDIR/env.sh
. "$here/env.sh"
PROG="argocd-up"
# shellcheck source=SCRIPTDIR/proc.sh
. "$here/proc.sh"
need_cluster_without "${ARGOCD_COMPONENTS[@]}"

kustomize_bin=${KUSTOMIZE:-$repo/bin/kustomize}
fn_bin=${MINICLUSTER_FN:-$repo/bin/minicluster-fn}
for tool in "$kustomize_bin" "$fn_bin"; do
  [ -x "$tool" ] || { echo "$PROG: $tool is missing (make build bin/kustomize)" >&2; exit 1; }
done
command -v redis-server > /dev/null || { echo "$PROG: redis-server is missing (make deps)" >&2; exit 1; }

say "components (tests/cluster/build-argocd.sh; cached after the first build)"
argocd=$("$here/build-argocd.sh")

# --- CRDs, namespace, configuration --------------------------------------------------------------
say "CRDs, namespace argocd, argocd-cm, argocd-secret, AppProject default"
crds_established "$argocd/crds"
# What an install of Argo CD puts in its namespace and the components read: argocd-cm and
# argocd-secret (found by their part-of label; the controller's settings need both, and a server
# signature key in the secret), and the project every Application names. argocd-cm's data is the
# tests' (they patch it as the examples say); this manager owns only its labels.
secret_key=$(openssl rand -base64 32)
kubectl apply --server-side --force-conflicts --field-manager=argocd-up -f - > /dev/null <<EOF
apiVersion: v1
kind: Namespace
metadata: {name: argocd}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: argocd-cm
  namespace: argocd
  labels: {app.kubernetes.io/name: argocd-cm, app.kubernetes.io/part-of: argocd}
---
apiVersion: v1
kind: Secret
metadata:
  name: argocd-secret
  namespace: argocd
  labels: {app.kubernetes.io/name: argocd-secret, app.kubernetes.io/part-of: argocd}
stringData:
  server.secretkey: "$secret_key"
---
apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: default, namespace: argocd}
spec:
  sourceRepos: ['*']
  destinations: [{server: '*', namespace: '*'}]
  clusterResourceWhitelist: [{group: '*', kind: '*'}]
EOF

# --- the components ------------------------------------------------------------------------------
# From here on a failure stops what was started (the CRDs and the namespace stay, like the
# cluster's other objects).
stop_on_failure "$here/argocd-down.sh"

data=$STATE/argocd
rm -rf "$data/plugins"
mkdir -p "$data"/{redis,plugins,tls,ssh,gnupg} "$data"/{repo-server,cmp-server,controller}/{home,tmp,bin} \
  "$data/cmp-server/config"
for dir in "$data/repo-server/bin" "$data/cmp-server/bin"; do
  install -m 0755 "$kustomize_bin" "$dir/kustomize"
  install -m 0755 "$fn_bin" "$dir/minicluster-fn"
done
install -m 0644 "$repo/examples/argocd/cmp/plugin.yaml" "$data/cmp-server/config/plugin.yaml"

# Each component gets only its own environment (set_env NAME PATH sets env_of): a HOME and TMPDIR
# of its own (nothing of the caller's Git or Docker credentials; the repo server checks
# repositories out in TMPDIR), its own tools before the system's on PATH, and Argo CD's data paths
# under $STATE instead of /app/config. ARGOCD_FAKE_IN_CLUSTER makes the in-cluster destination
# (https://kubernetes.default.svc) the cluster of KUBECONFIG, as in upstream's Procfile.
set_env() {
  env_of=(env -i PATH="$2:/usr/sbin:/usr/bin:/sbin:/bin" HOME="$data/$1/home" TMPDIR="$data/$1/tmp"
    ARGOCD_FAKE_IN_CLUSTER=true ARGOCD_TLS_DATA_PATH="$data/tls" ARGOCD_SSH_DATA_PATH="$data/ssh"
    ARGOCD_PLUGINSOCKFILEPATH="$data/plugins")
}

say "redis, repo-server, cmp-server, application-controller"
# Argo CD's caches only; nothing is persisted.
start argocd-redis redis-server --bind 127.0.0.1 --port "$ARGOCD_REDIS_PORT" --save '' --appendonly no \
  --dir "$data/redis" --daemonize no
wait_for argocd-redis 30 redis-cli -p "$ARGOCD_REDIS_PORT" ping

# The repo server: plaintext gRPC on the loopback (--client-ca-path '' too, or it refuses to start
# without TLS), GPG off. It runs Git with GIT_ASKPASS=argocd and verifies every checkout with
# hack/git-verify-wrapper.sh, so both directories are on its PATH; its credential socket is ours.
set_env repo-server "$data/repo-server/bin:$argocd/bin:$argocd/hack"
start argocd-repo-server "${env_of[@]}" ARGOCD_GPG_ENABLED=false ARGOCD_GNUPGHOME="$data/gnupg" \
  ARGOCD_ASK_PASS_SOCK="$data/ask-pass.sock" \
  "$argocd/bin/argocd-repo-server" --address 127.0.0.1 --port "$ARGOCD_REPO_SERVER_PORT" \
  --metrics-address 127.0.0.1 --metrics-port "$ARGOCD_REPO_SERVER_METRICS_PORT" \
  --disable-tls --client-ca-path '' --redis "127.0.0.1:$ARGOCD_REDIS_PORT" --logformat text

# The plugin sidecar: serves examples/argocd/cmp/plugin.yaml on its socket in the plugins
# directory, where the repo server finds it; its TMPDIR is not the repo server's.
set_env cmp-server "$data/cmp-server/bin"
start argocd-cmp-server "${env_of[@]}" "$argocd/bin/argocd-cmp-server" \
  --config-dir-path "$data/cmp-server/config" --logformat text

# The application controller, as the cluster's admin, for the Applications in argocd. Its metrics
# server has no address flag: it listens on all interfaces.
set_env controller "$argocd/bin"
start argocd-application-controller "${env_of[@]}" KUBECONFIG="$KUBECONFIG_ADMIN" \
  "$argocd/bin/argocd-application-controller" --namespace argocd \
  --repo-server "127.0.0.1:$ARGOCD_REPO_SERVER_PORT" --repo-server-plaintext \
  --redis "127.0.0.1:$ARGOCD_REDIS_PORT" --metrics-port "$ARGOCD_CONTROLLER_METRICS_PORT" --logformat text

wait_for argocd-repo-server 60 curl -sf "http://127.0.0.1:$ARGOCD_REPO_SERVER_METRICS_PORT/healthz"
wait_for argocd-cmp-server 60 test -S "$data/plugins/minicluster-fn.sock"
wait_for argocd-application-controller 60 curl -sf "http://127.0.0.1:$ARGOCD_CONTROLLER_METRICS_PORT/healthz"

trap - EXIT
say "Argo CD up: logs in $STATE/log/argocd-*.log; argocd-down.sh stops it"
