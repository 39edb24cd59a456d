#!/usr/bin/env bash
# The nodes of the live-test cluster beyond the first (up.sh --nodes N runs `add` N-1 times):
#
#   node.sh add            adds node i (the next of 1..MAX_NODES-1) and prints its name: a kubelet
#                          with its own containerd, bridge mcfn<i> at 10.244.<i>.1, pods in
#                          10.244.<i>.0/24, cgroup root /mcfn-n<i>; the images of node 0 are
#                          imported into it (load-image.sh imports into every running node); it
#                          is up when its Node is Ready. With NODE_TAINT=KEY in the environment,
#                          its kubelet registers the Node with the taint KEY:NoSchedule
#   node.sh stop NODE      powers it off: its pods' processes freeze, then its kubelet, containerd,
#                          shims and every process of its pods are killed at once (no graceful
#                          termination), and traffic to and from its pods and its address is
#                          dropped, so that peers see a dead host, not a refused connection
#   node.sh start NODE     powers it on again with its state: the traffic flows, containerd and the
#                          kubelet start over their old directories; up when its Node is Ready
#   node.sh remove NODE    cordons it, lets its kubelet stop its pods (for at most 30 s), powers it
#                          off, deletes its Node and removes what it made on the host (down.sh
#                          runs it for every added node)
#   node.sh list           each added node: index, name, running or stopped
#
# NODE is a node's index or name. Node 0 (up.sh's) is never stopped or removed here: the control
# plane lives beside it. Processes are recorded by PID in $STATE/run as up.sh's are; down.sh runs
# `remove` for every added node first. Exit status: 0 done; 1 failed (named); 2 wrong usage.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/env.sh
. "$here/env.sh"
PROG="node"
# shellcheck source=SCRIPTDIR/proc.sh
. "$here/proc.sh"
# shellcheck source=SCRIPTDIR/node-config.sh
. "$here/node-config.sh"

usage() { sed -n '2,/^$/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 1 ] || usage

if [ ! -f "$STATE/run/node-bin" ] || { [ "$1" != remove ] && ! recorded_pid kube-apiserver > /dev/null; }; then
  echo "node: no cluster is running from $STATE (make cluster-up)" >&2
  exit 1
fi
NODE_BIN=$(cat "$STATE/run/node-bin")
kubectl() { "$NODE_BIN/kubectl" --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }

# index NODE: the index of an added node, from its index or name.
index() {
  local i
  for i in $(added_nodes); do
    if [ "$1" = "$i" ] || [ "$1" = "$(node_name "$i")" ]; then echo "$i"; return 0; fi
  done
  echo "node: no added node $1 (node.sh list names them; node 0 is up.sh's and stays)" >&2
  exit 1
}

# Every cgroup hierarchy: on this VM the v1 ones and a cgroup2 mount beside them (unified), in which
# the node's pods get cgroups too; on a cgroup2 host, the one.
hierarchies() {
  if [ -f /sys/fs/cgroup/cgroup.controllers ]; then echo /sys/fs/cgroup; return; fi
  local d
  for d in /sys/fs/cgroup/*/; do echo "${d%/}"; done
}

# The node's cgroup root must exist in every hierarchy before its kubelet starts; a cpuset cgroup
# starts with no CPUs and memory nodes, so those are copied from the parent.
make_cgroups() {
  local h c=$1
  for h in $(hierarchies); do
    mkdir -p "$h/$c"
    if [ -f "$h/cpuset.cpus" ] && [ -f "$h/$c/cpuset.cpus" ]; then
      cat "$h/cpuset.cpus" > "$h/$c/cpuset.cpus"
      cat "$h/cpuset.mems" > "$h/$c/cpuset.mems"
    fi
  done
}
# cgroup_pids CGROUP: every process in the cgroup or below, in any hierarchy.
cgroup_pids() {
  local h
  for h in $(hierarchies); do
    [ -d "$h/$1" ] && find "$h/$1" -name cgroup.procs -exec cat {} + 2>/dev/null
  done | sort -u
}
# freeze CGROUP FROZEN|THAWED: the freezer's state of the whole cgroup (v1), where there is one.
freeze() {
  local f=/sys/fs/cgroup/freezer/$1/freezer.state
  [ -f "$f" ] || return 0
  echo "$2" > "$f"
}
remove_cgroups() {
  local h
  for h in $(hierarchies); do
    [ -d "$h/$1" ] && find "$h/$1" -depth -type d -exec rmdir {} + 2>/dev/null
  done
  return 0
}

# shims SOCKET: the containerd shims that serve that node's containerd.
shims() {
  local pid
  for pid in $(pgrep -f '^[^ ]*containerd-shim' || true); do
    { tr '\0' '\n' < "/proc/$pid/cmdline"; } 2>/dev/null | grep -qxF "$1" && echo "$pid"
  done
  return 0
}

# The nftables table that cuts a stopped node off: forwarded traffic to and from its pods, and the
# host's own to its address (the API server's calls to its kubelet) are dropped, not refused.
offline_table() { echo "mcfn-node-$1-off"; }
cut_off() {
  local i=$1 net
  net=$(node_ip "$i")
  net=${net%.*}.0/24
  nft -f - <<EOF
table ip $(offline_table "$i") {
  chain forward { type filter hook forward priority -10; policy accept; ip daddr $net drop; ip saddr $net drop; }
  chain output { type filter hook output priority -10; policy accept; ip daddr $net drop; }
  chain input { type filter hook input priority -10; policy accept; ip saddr $net drop; }
}
EOF
}
reconnect() { nft delete table ip "$(offline_table "$1")" 2>/dev/null || true; }

# start_containerd I, start_node_kubelet I: node I's components over its directories; the node is
# up once its Node is Ready.
start_containerd() {
  start "containerd-n$1" "$NODE_BIN/containerd" --config "$(node_dir "$1")/config/containerd.toml"
  wait_for "containerd-n$1" 30 "$NODE_BIN/ctr" --address "$(node_sock "$1")" version
}
start_node_kubelet() {
  local i=$1 name
  name=$(node_name "$i")
  start_kubelet "kubelet-n$i" "$(node_dir "$i")" "$(node_ip "$i")" "$name"
  wait_for "kubelet-n$i" 90 curl -sf "http://127.0.0.1:$(node_kubelet_healthz_port "$i")/healthz"
  wait_for "kubelet-n$i" 90 kubectl wait --for=condition=Ready "node/$name" --timeout=2s
}

# power_off I: what a node that loses power does to its processes, all at once.
power_off() {
  local i=$1 pid component pids=()
  cut_off "$i"
  freeze "$(node_cgroup "$i")" FROZEN
  for component in "kubelet-n$i" "containerd-n$i"; do
    pid=$(recorded_pid "$component") && pids+=("$pid")
  done
  # shellcheck disable=SC2207 # PIDs, one a line
  pids+=($(shims "$(node_sock "$i")") $(cgroup_pids "$(node_cgroup "$i")"))
  [ ${#pids[@]} = 0 ] || kill -KILL "${pids[@]}" 2>/dev/null || true
  # Killed while frozen, they die when thawed. A process in uninterruptible sleep (its I/O) dies
  # only once that returns: seconds on a machine whose disk a cold run's builds keep busy (a
  # cold run saw one outlive a deadline of 10 s, and another, with both GitOps builds beside the
  # tests, one of 60 s, gone when ps looked right after).
  freeze "$(node_cgroup "$i")" THAWED
  local deadline=$((SECONDS + 180))
  for pid in "${pids[@]}"; do
    while alive "$pid" && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
    if alive "$pid"; then
      echo "node: process $pid of node $i still runs 180 s after SIGKILL: $(ps -o stat=,wchan=,args= -p "$pid" 2>/dev/null)" >&2
      return 1
    fi
  done
  rm -f "$STATE/run/kubelet-n$i.pid" "$STATE/run/containerd-n$i.pid"
  return 0
}

cmd=$1
shift
case $cmd in
  add)
    [ $# = 0 ] || usage
    i=1
    while grep -qx "$i" <(added_nodes); do i=$((i + 1)); done
    [ "$i" -lt "$MAX_NODES" ] || { echo "node: the cluster has $MAX_NODES nodes already" >&2; exit 1; }
    dir=$(node_dir "$i")
    name=$(node_name "$i")
    say "adding node $i: $name, bridge $(node_bridge "$i") at $(node_ip "$i")"
    # Recorded first, so that a failure half-way leaves it for remove (and down.sh) to find; a
    # failure removes it again.
    echo "$i" >> "$STATE/run/nodes"
    trap '[ $? = 0 ] || { echo "node: adding node $i failed; removing it" >&2; "$0" remove "$i" >&2 || true; }' EXIT
    rm -rf "$dir"
    node_dirs "$dir"
    # A bridge of that name is what an earlier cluster of this state dir left (a node it could not
    # remove whole): ip link add would fail on it.
    if ip link show "$(node_bridge "$i")" > /dev/null 2>&1; then
      say "removing bridge $(node_bridge "$i"), left by an earlier cluster"
      ip link delete "$(node_bridge "$i")"
    fi
    node_network "$dir" "$(node_bridge "$i")" "$(node_ip "$i")" "$CNI_NETWORK-$i"
    make_cgroups "$(node_cgroup "$i")"
    make_cert "kubelet-n$i" "/O=system:nodes/CN=system:node:$name" clientAuth
    make_kubeconfig "$dir/config/kubelet.kubeconfig" "kubelet-n$i"
    containerd_config "$dir"
    kubelet_config "$dir" "$(node_ip "$i")" "$(node_kubelet_healthz_port "$i")" "$(node_cgroup "$i")" "${NODE_TAINT:-}"
    start_containerd "$i"
    # Every image node 0 has (the sandbox image among them), by name; not the digest-only names.
    mapfile -t refs < <("$NODE_BIN/ctr" --address "$CONTAINERD_SOCK" -n k8s.io images ls -q | grep -v '^sha256:')
    archive=$STATE/tmp/node-$i-images.tar
    # --local: ctr v2.4.2's export through containerd's transfer service sometimes ends early and
    # still exits 0 (2 of 30 exports of the pause image here were short; the import then fails on
    # "short read: expected 1431552 bytes but got 1310720"); written by ctr itself from the content
    # store, 60 of 60 were whole.
    "$NODE_BIN/ctr" --address "$CONTAINERD_SOCK" -n k8s.io images export --local "$archive" "${refs[@]}"
    import_archive "$(node_sock "$i")" "$archive"
    rm -f "$archive"
    start_node_kubelet "$i"
    trap - EXIT
    say "node $i up: $name"
    echo "$name"
    ;;
  stop)
    [ $# = 1 ] || usage
    i=$(index "$1")
    recorded_pid "kubelet-n$i" > /dev/null || { echo "node: node $i is not running" >&2; exit 1; }
    power_off "$i"
    say "node $i ($(node_name "$i")) powered off"
    ;;
  start)
    [ $# = 1 ] || usage
    i=$(index "$1")
    ! recorded_pid "kubelet-n$i" > /dev/null || { echo "node: node $i is running" >&2; exit 1; }
    reconnect "$i"
    start_containerd "$i"
    start_node_kubelet "$i"
    say "node $i ($(node_name "$i")) up again"
    ;;
  remove)
    [ $# = 1 ] || usage
    i=$(index "$1")
    dir=$(node_dir "$i")
    name=$(node_name "$i")
    # Its pods stopped the normal way first (CNI DEL takes their network namespaces and the bridge's
    # ports with it), where its kubelet and the API server still run.
    if recorded_pid "kubelet-n$i" > /dev/null && recorded_pid kube-apiserver > /dev/null; then
      kubectl cordon "$name" --request-timeout=10s > /dev/null 2>&1 || true
      kubectl delete pods --all-namespaces --field-selector "spec.nodeName=$name" --grace-period=5 --wait=false \
        --request-timeout=10s > /dev/null 2>&1 || true
      # Until no task runs: the containers of a node powered off and on stay listed, dead, until
      # the kubelet's garbage collection (every minute).
      deadline=$((SECONDS + 30))
      until [ -z "$("$NODE_BIN/ctr" --address "$(node_sock "$i")" -n k8s.io tasks ls 2>/dev/null | awk 'NR > 1 && $3 ~ /^(RUNNING|CREATED|PAUSED)$/')" ] \
        || [ "$SECONDS" -ge "$deadline" ]; do
        sleep 0.5
      done
    fi
    power_off "$i" || true
    reconnect "$i"
    # What its pods and containerd left: the bridge's ports go with their network namespaces, which
    # down.sh removes with every other pod network namespace; mounts under its directory.
    # grep finds none where the node never ran a pod (an add that failed early): with pipefail,
    # that must not end the removal here, before the bridge and the record are gone.
    { findmnt -rn -o TARGET | grep -F "$dir/" || true; } | sort -r | while read -r m; do
      umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || say "cannot unmount $m"
    done
    remove_cgroups "$(node_cgroup "$i")"
    ip link show "$(node_bridge "$i")" > /dev/null 2>&1 && ip link delete "$(node_bridge "$i")"
    rm -f /var/lib/cni/results/"$CNI_NETWORK-$i"-*
    kubectl delete node "$name" --ignore-not-found --request-timeout=10s > /dev/null 2>&1 || true
    left=()
    for component in "kubelet-n$i" "containerd-n$i"; do
      pid=$(recorded_pid "$component") && left+=("process $component (PID $pid)")
    done
    kubectl get node "$name" --request-timeout=10s > /dev/null 2>&1 && left+=("Node $name")
    for pid in $(shims "$(node_sock "$i")") $(cgroup_pids "$(node_cgroup "$i")"); do left+=("process $pid"); done
    for h in $(hierarchies); do [ -e "$h/$(node_cgroup "$i")" ] && left+=("cgroup $h/$(node_cgroup "$i")"); done
    ip link show "$(node_bridge "$i")" > /dev/null 2>&1 && left+=("bridge $(node_bridge "$i")")
    while read -r m; do [ -n "$m" ] && left+=("mount $m"); done < <(findmnt -rn -o TARGET | grep -F "$dir/")
    if [ ${#left[@]} -gt 0 ]; then
      echo "node: FAILED to remove node $i; left behind:" >&2
      printf '  %s\n' "${left[@]}" >&2
      exit 1
    fi
    rm -rf "$dir"
    grep -vx "$i" "$STATE/run/nodes" > "$STATE/run/nodes.new" || true
    mv "$STATE/run/nodes.new" "$STATE/run/nodes"
    say "node $i removed"
    ;;
  list)
    [ $# = 0 ] || usage
    for i in $(added_nodes); do
      if recorded_pid "kubelet-n$i" > /dev/null; then state=running; else state=stopped; fi
      printf '%s\t%s\t%s\n' "$i" "$(node_name "$i")" "$state"
    done
    ;;
  *) usage ;;
esac
