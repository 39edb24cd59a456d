# What each node of the live-test cluster is made of, for up.sh (node 0) and node.sh (the nodes it
# adds): its bridge and CNI network, its containerd, its kubelet, their certificates and
# kubeconfigs. Sourced after env.sh and proc.sh. A node's files live under a directory D: $STATE
# for node 0, $STATE/nodes/<i> for node i.
# shellcheck shell=bash

# The cluster's CA and every certificate up.sh and node.sh make.
pki=$STATE/pki

# node_dirs D: the directories a node's components write.
node_dirs() {
  mkdir -p "$1"/{config,containerd,cni/net.d,cni/ipam,kubelet,pod-logs,volume-plugins}
}

# node_network D BRIDGE BRIDGE_IP NETWORK: the node's bridge, then its CNI network on it.
# The bridge gets a MAC of its own (0a:58 and the bridge IP's bytes). Without one, Linux gives a
# bridge the lowest MAC of its ports, and the CNI bridge plugin left it so: the bridge's MAC changed
# as pods came and went. A pod that had looked up the bridge IP's MAC (its gateway, CoreDNS, the API
# server) while the lowest was a short-lived pod's, such as the keygen pod's, kept sending there
# once that pod was gone: its DNS lookups got no answer until its neighbour entry expired, and its
# broker, which resolves its parent's name on every retry, joined 40-80 s late.
# The CNI bridge plugin turns on net.ipv4.ip_forward; down.sh restores the old value.
node_network() {
  local dir=$1 bridge=$2 ip=$3 network=$4
  # shellcheck disable=SC2086 # the IP's four bytes, split on purpose
  ip link add "$bridge" address "$(printf '0a:58:%02x:%02x:%02x:%02x' ${ip//./ })" type bridge
  ip addr add "$ip/24" dev "$bridge"
  ip link set "$bridge" up
  cat > "$dir/cni/net.d/10-$network.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "$network",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$bridge",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$dir/cni/ipam",
        "ranges": [[{"subnet": "${ip%.*}.0/24", "rangeStart": "${ip%.*}.10", "gateway": "$ip"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    }
  ]
}
EOF
}

# make_cert NAME SUBJECT EXTENDED-KEY-USAGE [SUBJECT-ALT-NAMES]: a key and a certificate signed by
# the cluster's CA, in $pki.
make_cert() {
  local ext="$pki/$1.ext"
  printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=%s\n' "$3" > "$ext"
  [ -z "${4:-}" ] || printf 'subjectAltName=%s\n' "$4" >> "$ext"
  openssl req -new -newkey rsa:2048 -nodes -subj "$2" -keyout "$pki/$1.key" -out "$pki/$1.csr" 2>/dev/null
  openssl x509 -req -in "$pki/$1.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -set_serial "0x$(openssl rand -hex 12)" -days 2 \
    -extfile "$ext" -out "$pki/$1.crt" 2>/dev/null
}

# make_kubeconfig FILE CERT-NAME: a kubeconfig for the API server with that certificate.
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

# containerd_config D: the node's containerd configuration, D/config/containerd.toml; its socket is
# D/containerd/containerd.sock.
# containerd 2 (build-node.sh builds it), with version 4 of its config, its own. root lacks
# CAP_SYS_RESOURCE here: without restrict_oom_score_adj, runc fails every pod sandbox ("can't get
# final child's PID from pipe"; runc's log: oom_score_adj: Permission denied). Nothing of the
# host's: no drop-in files (imports, default /etc/containerd/conf.d), no NRI (its plugin would
# serve /var/run/nri/nri.sock), the shim built beside containerd (runtime_path) rather than one on
# PATH. runc is the machine's (Debian's).
containerd_config() {
  local dir=$1
  cat > "$dir/config/containerd.toml" <<EOF
version = 4
root = "$dir/containerd/root"
state = "$dir/containerd/state"
imports = []
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.blockfile",
  "io.containerd.snapshotter.v1.erofs", "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.nri.v1.nri"]

[plugins."io.containerd.server.v1.grpc"]
  address = "$dir/containerd/containerd.sock"
[plugins."io.containerd.server.v1.ttrpc"]
  address = "$dir/containerd/containerd.sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$dir/containerd/opt"
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
        Root = "$dir/runc"
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = ["$CNI_PLUGIN_DIR"]
    conf_dir = "$dir/cni/net.d"
    max_conf_num = 1
EOF
}

# kubelet_config D ADDRESS HEALTHZ-PORT [CGROUP-ROOT [TAINT-KEY]]: the node's kubelet configuration,
# D/config/kubelet.yaml. With TAINT-KEY, the kubelet registers its Node with the taint
# TAINT-KEY:NoSchedule, every time (also after the Node was deleted), so no pod that does not
# tolerate it is ever scheduled there.
# cgroup v1 needs failCgroupV1: false; volumePluginDir is ours (not /usr/libexec); the API server
# reaches the kubelet by the node's address first, so it listens on its bridge IP (--node-ip).
# The pods' resolv.conf ($STATE/config/resolv.conf, up.sh's): cluster DNS only (the kubelet adds the
# cluster search path), none of the host's search domains. A cgroup root of its own (node.sh) keeps
# a node's pods under one cgroup, which node.sh freezes to power the node off.
kubelet_config() {
  local dir=$1 address=$2 healthz=$3 cgroup_root=${4:-} taint=${5:-}
  cat > "$dir/config/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $address
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $healthz
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $pki/ca.crt}
authorization: {mode: Webhook}
containerRuntimeEndpoint: unix://$dir/containerd/containerd.sock
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
clusterDNS: [$BRIDGE_IP]
clusterDomain: cluster.local
resolvConf: $STATE/config/resolv.conf
volumePluginDir: $dir/volume-plugins
podLogsDir: $dir/pod-logs
makeIPTablesUtilChains: false
# Imported images cannot be pulled again: no image garbage collection.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
# How often the node reports, its lease and its status: env.sh, NODE_MONITOR_GRACE_SECONDS.
nodeLeaseDurationSeconds: $NODE_LEASE_SECONDS
nodeStatusUpdateFrequency: ${NODE_STATUS_SECONDS}s
# A busy shared disk must not evict the tests' pods.
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%
  nodefs.inodesFree: 1%
  imagefs.available: 1%
  imagefs.inodesFree: 1%
EOF
  [ -z "$cgroup_root" ] || printf 'cgroupRoot: /%s\n' "$cgroup_root" >> "$dir/config/kubelet.yaml"
  [ -z "$taint" ] || printf 'registerWithTaints:\n- {key: %s, effect: NoSchedule}\n' "$taint" >> "$dir/config/kubelet.yaml"
}

# start_kubelet NAME D ADDRESS NODE-NAME: starts the node's kubelet as component NAME.
# The kubelet makes its root directory a shared bind mount of itself, in Run, while another
# goroutine already binds the pod-resources socket under it: when the mount lands between that
# socket's creation and its rename into place, the rename fails with EXDEV and the kubelet exits
# ("Failed to create listener for podResources endpoint"; seen once in CI). Mounted here first,
# the kubelet finds it shared and mounts nothing. down.sh unmounts it with the rest under $STATE.
start_kubelet() {
  local name=$1 dir=$2 address=$3 node=$4
  if ! findmnt -rn -o TARGET "$dir/kubelet" > /dev/null; then
    mount --bind "$dir/kubelet" "$dir/kubelet"
    mount --make-rshared "$dir/kubelet"
  fi
  start "$name" "$NODE_BIN/kubelet" --config "$dir/config/kubelet.yaml" \
    --kubeconfig "$dir/config/kubelet.kubeconfig" --root-dir "$dir/kubelet" \
    --node-ip "$address" --hostname-override "$node"
}
