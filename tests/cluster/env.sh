# Shared settings of the live-test cluster scripts (sourced by all of them).
# shellcheck shell=bash disable=SC2034  # the settings are used by the scripts that source this file

# Everything the cluster writes lives in STATE: configs, certificates, logs, PIDs, the containerd
# root and state, the kubelet root, etcd's data. down.sh removes it (the logs stay in STATE/log).
STATE=${MINICLUSTER_FN_CLUSTER_STATE:-/var/tmp/minicluster-fn-cluster}
CACHE=${MINICLUSTER_FN_CACHE:-/var/cache/minicluster-fn}

# The pod network: a bridge of our own, made before anything binds to its address (the API server,
# the kubelet and CoreDNS listen on it; pods reach them there).
BRIDGE=mcfn0
BRIDGE_IP=10.244.0.1
SERVICE_CIDR=10.96.0.0/16
# Every node's pods: node i (0 the first, up.sh's; 1-3 added by node.sh) has its own bridge
# mcfn<i> at 10.244.<i>.1 and pods in 10.244.<i>.0/24, a connected route on the host, so pods of
# different nodes reach each other with no other route.
CLUSTER_CIDR=10.244.0.0/16
MAX_NODES=4

# How fast the cluster gives up on a node that stopped answering, so that a node lost in a test
# costs seconds: the node is NotReady (Ready=Unknown, tainted unreachable) when neither its lease
# nor its status was renewed for NODE_MONITOR_GRACE_SECONDS, and its pods are evicted
# POD_NODE_TOLERATION_SECONDS later (the tolerations the API server gives every pod). A user's
# cluster keeps Kubernetes' defaults, in brackets, unless its administrator changed them: a lost
# node is NotReady after 50 s and its pods are evicted 300 s after that (docs/testing.md).
NODE_LEASE_SECONDS=10          # kubelet nodeLeaseDurationSeconds, renewed every quarter (40)
NODE_STATUS_SECONDS=4          # kubelet nodeStatusUpdateFrequency (10)
NODE_MONITOR_GRACE_SECONDS=20  # kube-controller-manager --node-monitor-grace-period (50); its
                               # --node-monitor-period, how often it looks, is 1 s here (5 s)
POD_NODE_TOLERATION_SECONDS=20 # kube-apiserver --default-{not-ready,unreachable}-toleration-seconds (300)
CNI_NETWORK=mcfn-live
CNI_PLUGIN_DIR=/usr/lib/cni

ETCD_CLIENT_PORT=23790
ETCD_PEER_PORT=23800
APISERVER_PORT=6443
KCM_PORT=10257
SCHEDULER_PORT=10259
KUBELET_PORT=10250
KUBELET_HEALTHZ_PORT=10248
PROXY_HEALTHZ_PORT=10256
PROXY_METRICS_PORT=10249
COREDNS_READY_PORT=18181
COREDNS_HEALTH_PORT=18080
# Flux CD's controllers (fluxcd-up.sh), on the host's loopback. source-controller serves its
# artifacts on SOURCE_CONTROLLER_STORAGE_PORT, where kustomize-controller fetches them.
SOURCE_CONTROLLER_METRICS_PORT=18090
SOURCE_CONTROLLER_HEALTH_PORT=18091
SOURCE_CONTROLLER_STORAGE_PORT=18092
KUSTOMIZE_CONTROLLER_METRICS_PORT=18093
KUSTOMIZE_CONTROLLER_HEALTH_PORT=18094
# The Flux Framework operator's manager (operator-up.sh), on the host's loopback.
OPERATOR_METRICS_PORT=18095
OPERATOR_HEALTH_PORT=18096
# Argo CD's components (argocd-up.sh), on the host's loopback: redis, the repo server's gRPC and
# metrics ports, the application controller's metrics port (both metrics ports serve /healthz).
ARGOCD_REDIS_PORT=18097
ARGOCD_REPO_SERVER_PORT=18098
ARGOCD_REPO_SERVER_METRICS_PORT=18099
ARGOCD_CONTROLLER_METRICS_PORT=18100
# Kueue's manager (kueue-up.sh), on the host's loopback: the webhooks the API server calls, its
# health probes (/readyz once the webhook server listens), its metrics.
KUEUE_WEBHOOK_PORT=18101
KUEUE_HEALTH_PORT=18102
KUEUE_METRICS_PORT=18103
# Kueue acts on the Jobs of the namespaces with this label only (its webhooks' namespaceSelector
# and its managedJobsNamespaceSelector): the other live tests' Jobs never wait on its webhooks.
KUEUE_NAMESPACE_LABEL=minicluster-fn.test/kueue

NODE_NAME=$(hostname | tr '[:upper:]' '[:lower:]')
# Node i of several (node.sh): i from 1 to MAX_NODES-1; node 0 is up.sh's, with the settings above.
# Each has its own kubelet, containerd (and runc root, CNI configuration), bridge and address, and
# cgroup root, so that one freezer write stops all of its pods.
node_name() { echo "$NODE_NAME-n$1"; }
node_bridge() { echo "mcfn$1"; }
node_ip() { echo "10.244.$1.1"; }
node_dir() { echo "$STATE/nodes/$1"; }
node_sock() { echo "$STATE/nodes/$1/containerd/containerd.sock"; }
node_cgroup() { echo "mcfn-n$1"; }
node_kubelet_healthz_port() { echo $((KUBELET_HEALTHZ_PORT + 100 + $1)); }
# The added nodes, one index a line ($STATE/run/nodes, written by node.sh add).
added_nodes() { [ -f "$STATE/run/nodes" ] && cat "$STATE/run/nodes"; return 0; }
# Every node's containerd socket: node 0's, then the added nodes'.
node_socks() { echo "$CONTAINERD_SOCK"; local i; for i in $(added_nodes); do node_sock "$i"; done; }
CONTAINERD_SOCK=$STATE/containerd/containerd.sock
# import_archive SOCK ARCHIVE: ctr images import of ARCHIVE into the containerd of SOCK (namespace
# k8s.io), with the ctr of $NODE_BIN.
import_archive() {
  "$NODE_BIN/ctr" --address "$1" -n k8s.io images import "$2" > /dev/null
}
# ctr would print containerd's deprecation of cgroup v1 (this VM's cgroups) on every call.
export CONTAINERD_SUPPRESS_DEPRECATION_WARNINGS=1
KUBECONFIG_ADMIN=$STATE/kubeconfig
PAUSE_IMAGE=localhost/minicluster-fn-live/pause:1   # built by image.sh pause

# Host settings the components change (the CNI bridge plugin turns on forwarding; the kubelet sets
# the kernel tunables it insists on): recorded by up.sh, restored by down.sh.
HOST_SYSCTLS=(net/ipv4/ip_forward vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops
  kernel/keys/root_maxkeys kernel/keys/root_maxbytes)

# Components in start order; down.sh stops them in reverse.
COMPONENTS=(containerd etcd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy coredns)
# Flux CD's, started by fluxcd-up.sh after those and stopped by fluxcd-down.sh before them.
FLUXCD_COMPONENTS=(source-controller kustomize-controller)
# The operator's manager, started by operator-up.sh and stopped by operator-down.sh, or down.sh.
OPERATOR_COMPONENTS=(flux-operator)
# Argo CD's, in start order, started by argocd-up.sh and stopped by argocd-down.sh, or down.sh.
ARGOCD_COMPONENTS=(argocd-redis argocd-repo-server argocd-cmp-server argocd-application-controller)
# Kueue's manager, started by kueue-up.sh and stopped by kueue-down.sh, or down.sh.
KUEUE_COMPONENTS=(kueue)
