#!/usr/bin/env bash
# Brings up a real single-node Kubernetes cluster for the live tests and for trying things by hand
# (make cluster-up): containerd, a CNI bridge, etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kubelet, kube-proxy (nftables) and CoreDNS serving cluster.local, all as host
# processes started from here and recorded by PID in $STATE/run. Stop it with down.sh.
#
#   up.sh [--nodes N] [--fluxcd]
#
# --nodes N (or MINICLUSTER_FN_CLUSTER_NODES=N), N from 1 (the default) to 4: N nodes, each a
# kubelet with its own containerd, bridge, pod network and cgroup root; the first is this script's,
# node.sh adds the others (node.sh says more). The control plane, kube-proxy and CoreDNS are shared.
# --fluxcd (or MINICLUSTER_FN_CLUSTER_FLUXCD=1): also Flux CD's source-controller and
# kustomize-controller, started last by fluxcd-up.sh.
#
# Exit status: 0 up; 1 a component failed (named, with the tail of its log; what was started is
# stopped again); 2 wrong usage; 3 this machine cannot run a kubelet (the missing piece is named).
# Settings that this kind of VM needs are commented where they are made.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/env.sh
. "$here/env.sh"
PROG="cluster-up"
# shellcheck source=SCRIPTDIR/proc.sh
. "$here/proc.sh"
# shellcheck source=SCRIPTDIR/node-config.sh
. "$here/node-config.sh"
cannot_run() { echo "cluster-up: CANNOT RUN A KUBELET ON THIS MACHINE: $*" >&2; exit 3; }

fluxcd=${MINICLUSTER_FN_CLUSTER_FLUXCD:-0}
nodes=${MINICLUSTER_FN_CLUSTER_NODES:-1}
usage() { echo "usage: up.sh [--nodes N] [--fluxcd]" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --fluxcd) fluxcd=1 ;;
    --nodes) [ $# -ge 2 ] || usage; nodes=$2; shift ;;
    *) usage ;;
  esac
  shift
done
case $nodes in [1-9]) [ "$nodes" -le "$MAX_NODES" ] || usage ;; *) usage ;; esac

# --- what the machine must provide ---------------------------------------------------------------
[ "$(id -u)" = 0 ] || cannot_run "not root (the kubelet, containerd and CNI need root)"
for cmd in runc nft ip openssl podman curl findmnt setsid; do
  command -v "$cmd" >/dev/null || cannot_run "command '$cmd' is missing (.ci/run installs it with apt-get)"
done
for plugin in bridge host-local loopback; do
  [ -x "$CNI_PLUGIN_DIR/$plugin" ] || cannot_run "CNI plugin $CNI_PLUGIN_DIR/$plugin is missing (Debian: containernetworking-plugins)"
done
[ -d /sys/fs/cgroup/memory ] || [ -f /sys/fs/cgroup/cgroup.controllers ] || cannot_run "no cgroup filesystem at /sys/fs/cgroup"
grep -qw overlay /proc/filesystems || cannot_run "the kernel has no overlay filesystem (containerd's snapshotter)"

# --- refuse to start over a running or half-removed cluster --------------------------------------
if [ -d "$STATE/run" ]; then
  for f in "$STATE"/run/*.pid; do
    [ -e "$f" ] || continue
    read -r pid _ < "$f"
    if kill -0 "$pid" 2>/dev/null; then
      echo "cluster-up: a cluster is already running from $STATE ($(basename "$f" .pid) is PID $pid); run down.sh first" >&2
      exit 1
    fi
  done
fi
if ip link show "$BRIDGE" >/dev/null 2>&1; then
  echo "cluster-up: bridge $BRIDGE exists already (another cluster, or a failed teardown); run down.sh" >&2; exit 1
fi
for d in /sys/fs/cgroup/*/kubepods; do
  [ -e "$d" ] && { echo "cluster-up: $d exists already (another kubelet, or a failed teardown); run down.sh" >&2; exit 1; }
done
if [ -e "$STATE" ] && findmnt -rn -o TARGET | grep -q "^$STATE/"; then
  echo "cluster-up: mounts are left under $STATE; run down.sh" >&2; exit 1
fi

# --- binaries ------------------------------------------------------------------------------------
# MINICLUSTER_FN_NODE_BIN: a directory with the binaries, instead of build-node.sh's cached build.
if [ -n "${MINICLUSTER_FN_NODE_BIN:-}" ]; then
  NODE_BIN=$MINICLUSTER_FN_NODE_BIN
else
  say "node binaries (tests/cluster/build-node.sh; cached after the first build)"
  NODE_BIN=$("$here/build-node.sh")
fi
# Built before anything starts, so that a cold build does not keep a started cluster waiting and a
# failed one starts nothing.
if [ "$fluxcd" = 1 ]; then
  say "Flux CD controllers (tests/cluster/build-fluxcd.sh; cached after the first build)"
  "$here/build-fluxcd.sh" > /dev/null
fi

rm -rf "$STATE"
mkdir -p "$STATE"/{run,log,pki,config,host-before,containerd,cni/net.d,cni/ipam,etcd,kubelet,pod-logs,volume-plugins,tmp}
echo "$NODE_BIN" > "$STATE/run/node-bin"

# From here on a failure stops what was started.
stop_on_failure "$here/down.sh"

# --- host state to restore -----------------------------------------------------------------------
for s in "${HOST_SYSCTLS[@]}"; do
  printf '%s %s\n' "$s" "$(cat "/proc/sys/$s")"
done > "$STATE/host-before/sysctls"
nft list tables > "$STATE/host-before/nft-tables"
ls /run/netns 2>/dev/null > "$STATE/host-before/netns" || true
# Directories the components create at fixed places when missing (the kubelet's links to container
# logs, CNI's result cache, the netns mount point): down.sh removes them if they were not there.
for d in /var/log/containers /var/lib/cni /run/netns; do
  [ -e "$d" ] || echo "$d"
done > "$STATE/host-before/absent-dirs"

# --- network: the bridge before anything binds to its address ----------------------------------
# The API server and CoreDNS listen on the bridge IP, so it must exist first.
node_network "$STATE" "$BRIDGE" "$BRIDGE_IP" "$CNI_NETWORK"
echo "$BRIDGE" > "$STATE/run/bridge"

# --- certificates --------------------------------------------------------------------------------
say "certificates"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=minicluster-fn-live-ca" \
  -keyout "$pki/ca.key" -out "$pki/ca.crt" 2>/dev/null
openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
service_ip=${SERVICE_CIDR%.0/*}.1
# In parallel: RSA key generation is most of the time, and slow on a busy machine.
make_cert apiserver "/CN=kube-apiserver" serverAuth \
  "IP:$BRIDGE_IP,IP:$service_ip,IP:127.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:$NODE_NAME" &
make_cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" clientAuth &
make_cert admin "/O=system:masters/CN=minicluster-fn-live-admin" clientAuth &
make_cert kube-controller-manager "/CN=system:kube-controller-manager" clientAuth &
make_cert kube-scheduler "/CN=system:kube-scheduler" clientAuth &
make_cert kubelet "/O=system:nodes/CN=system:node:$NODE_NAME" clientAuth &
make_cert kube-proxy "/CN=system:kube-proxy" clientAuth &
make_cert coredns "/CN=minicluster-fn-live:coredns" clientAuth &
for job in $(jobs -p); do wait "$job" || { echo "cluster-up: making the certificates failed" >&2; exit 1; }; done

make_kubeconfig "$KUBECONFIG_ADMIN" admin
for c in kube-controller-manager kube-scheduler kubelet kube-proxy coredns; do
  make_kubeconfig "$STATE/config/$c.kubeconfig" "$c"
done
kubectl() { "$NODE_BIN/kubectl" --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }

# --- containerd --------------------------------------------------------------------------------
containerd_config "$STATE"
say "containerd"
start containerd "$NODE_BIN/containerd" --config "$STATE/config/containerd.toml"
wait_for containerd 30 "$NODE_BIN/ctr" --address "$CONTAINERD_SOCK" version
# The sandbox image: nothing can be pulled, so it is built here (and cached).
"$here/load-image.sh" "$("$here/image.sh" pause)"

# --- etcd ----------------------------------------------------------------------------------------
say "etcd"
start etcd "$NODE_BIN/etcd" --name default --data-dir "$STATE/etcd" --unsafe-no-fsync \
  --listen-client-urls "http://127.0.0.1:$ETCD_CLIENT_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_CLIENT_PORT" \
  --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
  --initial-cluster "default=http://127.0.0.1:$ETCD_PEER_PORT"
wait_for etcd 60 curl -sf "http://127.0.0.1:$ETCD_CLIENT_PORT/health"

# --- kube-apiserver ------------------------------------------------------------------------------
say "kube-apiserver"
start kube-apiserver "$NODE_BIN/kube-apiserver" \
  --etcd-servers "http://127.0.0.1:$ETCD_CLIENT_PORT" \
  --bind-address "$BRIDGE_IP" --advertise-address "$BRIDGE_IP" --secure-port "$APISERVER_PORT" \
  --cert-dir "$STATE/pki" --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
  --client-ca-file "$pki/ca.crt" \
  --service-account-issuer https://kubernetes.default.svc.cluster.local \
  --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
  --service-cluster-ip-range "$SERVICE_CIDR" \
  --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction --allow-privileged=true \
  --kubelet-client-certificate "$pki/apiserver-kubelet-client.crt" --kubelet-client-key "$pki/apiserver-kubelet-client.key" \
  --kubelet-preferred-address-types InternalIP,Hostname \
  --default-not-ready-toleration-seconds "$POD_NODE_TOLERATION_SECONDS" \
  --default-unreachable-toleration-seconds "$POD_NODE_TOLERATION_SECONDS" \
  --profiling=false
wait_for kube-apiserver 120 curl -sf --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" \
  "https://$BRIDGE_IP:$APISERVER_PORT/readyz"

# --- kube-controller-manager and kube-scheduler ------------------------------------------------
# --flex-volume-plugin-dir of our own: the default would create directories under /usr/libexec.
say "kube-controller-manager, kube-scheduler"
start kube-controller-manager "$NODE_BIN/kube-controller-manager" \
  --kubeconfig "$STATE/config/kube-controller-manager.kubeconfig" \
  --authentication-kubeconfig "$STATE/config/kube-controller-manager.kubeconfig" \
  --authorization-kubeconfig "$STATE/config/kube-controller-manager.kubeconfig" \
  --bind-address 127.0.0.1 --secure-port "$KCM_PORT" --cert-dir "$STATE/pki/kube-controller-manager" \
  --service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" \
  --use-service-account-credentials=true --leader-elect=false \
  --node-monitor-period 1s --node-monitor-grace-period "${NODE_MONITOR_GRACE_SECONDS}s" \
  --flex-volume-plugin-dir "$STATE/volume-plugins" --profiling=false
start kube-scheduler "$NODE_BIN/kube-scheduler" \
  --kubeconfig "$STATE/config/kube-scheduler.kubeconfig" \
  --authentication-kubeconfig "$STATE/config/kube-scheduler.kubeconfig" \
  --authorization-kubeconfig "$STATE/config/kube-scheduler.kubeconfig" \
  --bind-address 127.0.0.1 --secure-port "$SCHEDULER_PORT" --cert-dir "$STATE/pki/kube-scheduler" \
  --leader-elect=false --profiling=false
wait_for kube-controller-manager 60 curl -skf "https://127.0.0.1:$KCM_PORT/healthz"
wait_for kube-scheduler 60 curl -skf "https://127.0.0.1:$SCHEDULER_PORT/healthz"

# --- kubelet -----------------------------------------------------------------------------------
printf 'nameserver %s\n' "$BRIDGE_IP" > "$STATE/config/resolv.conf"
kubelet_config "$STATE" "$BRIDGE_IP" "$KUBELET_HEALTHZ_PORT"
say "kubelet"
start_kubelet kubelet "$STATE" "$BRIDGE_IP" "$NODE_NAME"
wait_for kubelet 90 curl -sf "http://127.0.0.1:$KUBELET_HEALTHZ_PORT/healthz"
wait_for kubelet 90 kubectl wait --for=condition=Ready "node/$NODE_NAME" --timeout=2s

# --- kube-proxy, nftables -----------------------------------------------------------------------
# conntrack set to zeros: kube-proxy would otherwise change host-wide conntrack sysctls.
cat > "$STATE/config/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: nftables
clientConnection: {kubeconfig: $STATE/config/kube-proxy.kubeconfig}
hostnameOverride: $NODE_NAME
clusterCIDR: $CLUSTER_CIDR
healthzBindAddress: 127.0.0.1:$PROXY_HEALTHZ_PORT
metricsBindAddress: 127.0.0.1:$PROXY_METRICS_PORT
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
EOF
say "kube-proxy"
start kube-proxy "$NODE_BIN/kube-proxy" --config "$STATE/config/kube-proxy.yaml"
wait_for kube-proxy 60 curl -sf "http://127.0.0.1:$PROXY_HEALTHZ_PORT/healthz"

# --- CoreDNS on the bridge address, serving cluster.local -----------------------------------------
kubectl apply -f - > /dev/null <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "minicluster-fn-live:coredns"}
rules:
- apiGroups: [""]
  resources: [endpoints, services, pods, namespaces]
  verbs: [list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "minicluster-fn-live:coredns"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "minicluster-fn-live:coredns"}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: "minicluster-fn-live:coredns"}
EOF
cat > "$STATE/config/Corefile" <<EOF
cluster.local:53 in-addr.arpa:53 {
    bind $BRIDGE_IP
    errors
    kubernetes cluster.local in-addr.arpa {
        kubeconfig $STATE/config/coredns.kubeconfig minicluster-fn-live
        pods insecure
    }
    ready 127.0.0.1:$COREDNS_READY_PORT
    health 127.0.0.1:$COREDNS_HEALTH_PORT
}
EOF
say "coredns"
start coredns "$NODE_BIN/coredns" -conf "$STATE/config/Corefile"
wait_for coredns 60 curl -sf "http://127.0.0.1:$COREDNS_READY_PORT/ready"
# The cluster DNS where clusters publish it: Service kube-system/kube-dns, labelled k8s-app=kube-dns
# (kubeadm's and CoreDNS's own manifests), here without a selector and with an EndpointSlice that
# names CoreDNS on the bridge address. The pods resolve through that address (the kubelets'
# clusterDNS); what reads the cluster for its DNS (minicluster-fn check) finds it as on users'.
kubectl apply -f - > /dev/null <<EOF
apiVersion: v1
kind: Service
metadata: {name: kube-dns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  ports:
  - {name: dns, port: 53, protocol: UDP}
  - {name: dns-tcp, port: 53, protocol: TCP}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: kube-dns-coredns
  namespace: kube-system
  labels: {kubernetes.io/service-name: kube-dns, endpointslice.kubernetes.io/managed-by: minicluster-fn-live}
addressType: IPv4
ports:
- {name: dns, port: 53, protocol: UDP}
- {name: dns-tcp, port: 53, protocol: TCP}
endpoints:
- addresses: [$BRIDGE_IP]
  conditions: {ready: true}
EOF

# Pods need the namespace's ServiceAccount and kube-root-ca.crt before they can be created.
wait_for kube-controller-manager 60 kubectl -n default get serviceaccount default

# The other nodes, once the cluster's services (DNS) they use run.
for ((n = 1; n < nodes; n++)); do
  "$here/node.sh" add > /dev/null
done

# Flux CD last: it needs the API server only. A failure here takes the whole cluster down, like any
# other component's.
if [ "$fluxcd" = 1 ]; then "$here/fluxcd-up.sh"; fi

trap - EXIT
say "cluster up; kubeconfig: $KUBECONFIG_ADMIN; kubectl: $NODE_BIN/kubectl"
