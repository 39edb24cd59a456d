#!/usr/bin/env bash
# Brings up a real single-node Kubernetes cluster for the live tests and for trying things by hand
# (make cluster-up): containerd, a CNI bridge, etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kubelet, kube-proxy (nftables) and CoreDNS serving cluster.local, all as host
# processes started from here and recorded by PID in $STATE/run. Stop it with down.sh.
#
#   up.sh [--fluxcd]
#
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
cannot_run() { echo "cluster-up: CANNOT RUN A KUBELET ON THIS MACHINE: $*" >&2; exit 3; }

fluxcd=${MINICLUSTER_FN_CLUSTER_FLUXCD:-0}
for arg in "$@"; do
  case $arg in
    --fluxcd) fluxcd=1 ;;
    *) echo "usage: up.sh [--fluxcd]" >&2; exit 2 ;;
  esac
done

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
# The API server and CoreDNS listen on the bridge IP, so it must exist first. The CNI bridge plugin
# turns on net.ipv4.ip_forward; down.sh restores the old value.
# The bridge gets a MAC of its own (0a:58 and the bridge IP's bytes). Without one, Linux gives a
# bridge the lowest MAC of its ports, and the CNI bridge plugin left it so: the bridge's MAC changed
# as pods came and went. A pod that had looked up the bridge IP's MAC (its gateway, CoreDNS, the API
# server) while the lowest was a short-lived pod's, such as the keygen pod's, kept sending there
# once that pod was gone: its DNS lookups got no answer until its neighbour entry expired, and its
# broker, which resolves its parent's name on every retry, joined 40-80 s late.
# shellcheck disable=SC2086 # the IP's four bytes, split on purpose
ip link add "$BRIDGE" address "$(printf '0a:58:%02x:%02x:%02x:%02x' ${BRIDGE_IP//./ })" type bridge
echo "$BRIDGE" > "$STATE/run/bridge"
ip addr add "$BRIDGE_IP/${POD_CIDR#*/}" dev "$BRIDGE"
ip link set "$BRIDGE" up
cat > "$STATE/cni/net.d/10-$CNI_NETWORK.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "$CNI_NETWORK",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$STATE/cni/ipam",
        "ranges": [[{"subnet": "$POD_CIDR", "rangeStart": "${BRIDGE_IP%.*}.10", "gateway": "$BRIDGE_IP"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    }
  ]
}
EOF

# --- certificates --------------------------------------------------------------------------------
pki=$STATE/pki
say "certificates"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=minicluster-fn-live-ca" \
  -keyout "$pki/ca.key" -out "$pki/ca.crt" 2>/dev/null
openssl genrsa -out "$pki/sa.key" 2048 2>/dev/null
openssl rsa -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
# make_cert NAME SUBJECT EXTENDED-KEY-USAGE [SUBJECT-ALT-NAMES]
make_cert() {
  local ext="$pki/$1.ext"
  printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=%s\n' "$3" > "$ext"
  [ -z "${4:-}" ] || printf 'subjectAltName=%s\n' "$4" >> "$ext"
  openssl req -new -newkey rsa:2048 -nodes -subj "$2" -keyout "$pki/$1.key" -out "$pki/$1.csr" 2>/dev/null
  openssl x509 -req -in "$pki/$1.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -set_serial "0x$(openssl rand -hex 12)" -days 2 \
    -extfile "$ext" -out "$pki/$1.crt" 2>/dev/null
}
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

# make_kubeconfig FILE CERT-NAME
make_kubeconfig() {
  cat > "$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: minicluster-fn-live
  cluster:
    server: https://$BRIDGE_IP:$APISERVER_PORT
    certificate-authority: $pki/ca.crt
users:
- name: $2
  user:
    client-certificate: $pki/$2.crt
    client-key: $pki/$2.key
contexts:
- name: minicluster-fn-live
  context: {cluster: minicluster-fn-live, user: $2}
current-context: minicluster-fn-live
EOF
}
make_kubeconfig "$KUBECONFIG_ADMIN" admin
for c in kube-controller-manager kube-scheduler kubelet kube-proxy coredns; do
  make_kubeconfig "$STATE/config/$c.kubeconfig" "$c"
done
kubectl() { "$NODE_BIN/kubectl" --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }

# --- containerd --------------------------------------------------------------------------------
# containerd 2 (build-node.sh builds it), with version 4 of its config, its own. root lacks
# CAP_SYS_RESOURCE here: without restrict_oom_score_adj, runc fails every pod sandbox ("can't get
# final child's PID from pipe"; runc's log: oom_score_adj: Permission denied). Nothing of the
# host's: no drop-in files (imports, default /etc/containerd/conf.d), no NRI (its plugin would
# serve /var/run/nri/nri.sock), the shim built beside containerd (runtime_path) rather than one on
# PATH. runc is the machine's (Debian's).
cat > "$STATE/config/containerd.toml" <<EOF
version = 4
root = "$STATE/containerd/root"
state = "$STATE/containerd/state"
imports = []
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.blockfile",
  "io.containerd.snapshotter.v1.erofs", "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.nri.v1.nri"]

[plugins."io.containerd.server.v1.grpc"]
  address = "$CONTAINERD_SOCK"
[plugins."io.containerd.server.v1.ttrpc"]
  address = "$CONTAINERD_SOCK.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$STATE/containerd/opt"
[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = "$PAUSE_IMAGE"
[plugins."io.containerd.cri.v1.runtime"]
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      runtime_path = "$NODE_BIN/containerd-shim-runc-v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$STATE/runc"
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = ["$CNI_PLUGIN_DIR"]
    conf_dir = "$STATE/cni/net.d"
    max_conf_num = 1
EOF
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
# cgroup v1 needs failCgroupV1: false; volumePluginDir is ours (not /usr/libexec); the API server
# reaches the kubelet by the node's address first, so it listens on the bridge IP (--node-ip).
# The pods' resolv.conf: cluster DNS only (the kubelet adds the cluster search path), none of the
# host's search domains.
printf 'nameserver %s\n' "$BRIDGE_IP" > "$STATE/config/resolv.conf"
cat > "$STATE/config/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $BRIDGE_IP
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $pki/ca.crt}
authorization: {mode: Webhook}
containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
clusterDNS: [$BRIDGE_IP]
clusterDomain: cluster.local
resolvConf: $STATE/config/resolv.conf
volumePluginDir: $STATE/volume-plugins
podLogsDir: $STATE/pod-logs
makeIPTablesUtilChains: false
# Imported images cannot be pulled again: no image garbage collection.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
# A busy shared disk must not evict the tests' pods.
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%
  nodefs.inodesFree: 1%
  imagefs.available: 1%
  imagefs.inodesFree: 1%
EOF
# The kubelet makes its root directory a shared bind mount of itself, in Run, while another
# goroutine already binds the pod-resources socket under it: when the mount lands between that
# socket's creation and its rename into place, the rename fails with EXDEV and the kubelet exits
# ("Failed to create listener for podResources endpoint"; seen once in CI). Mounted here first,
# the kubelet finds it shared and mounts nothing. down.sh unmounts it with the rest under $STATE.
mount --bind "$STATE/kubelet" "$STATE/kubelet"
mount --make-rshared "$STATE/kubelet"
say "kubelet"
start kubelet "$NODE_BIN/kubelet" --config "$STATE/config/kubelet.yaml" \
  --kubeconfig "$STATE/config/kubelet.kubeconfig" --root-dir "$STATE/kubelet" \
  --node-ip "$BRIDGE_IP" --hostname-override "$NODE_NAME"
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
clusterCIDR: $POD_CIDR
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

# Pods need the namespace's ServiceAccount and kube-root-ca.crt before they can be created.
wait_for kube-controller-manager 60 kubectl -n default get serviceaccount default

# Flux CD last: it needs the API server only. A failure here takes the whole cluster down, like any
# other component's.
if [ "$fluxcd" = 1 ]; then "$here/fluxcd-up.sh"; fi

trap - EXIT
say "cluster up; kubeconfig: $KUBECONFIG_ADMIN; kubectl: $NODE_BIN/kubectl"
