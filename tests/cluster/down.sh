#!/usr/bin/env bash
# Stops the live-test cluster that up.sh started from $STATE, and only that: Flux CD's controllers
# if fluxcd-up.sh started them (fluxcd-down.sh), the operator's manager if operator-up.sh started
# it (operator-down.sh), Argo CD's components if argocd-up.sh started them (argocd-down.sh), Kueue
# and its webhooks if kueue-up.sh started them (kueue-down.sh), the nodes node.sh added (node.sh remove), the PIDs up.sh recorded, the pods' processes in
# the kubelet's kubepods cgroups, and the containerd shims serving $STATE's socket. Then removes
# what those made on the host (pod network namespaces, mounts under $STATE, kubepods cgroups,
# kube-proxy's nftables tables, the bridge, CNI result files), restores the sysctls up.sh
# recorded, and CHECKS that nothing is left: exit 1, naming each leftover, if something is. Logs
# stay in $STATE/log.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/env.sh
. "$here/env.sh"
PROG="cluster-down"
# shellcheck source=SCRIPTDIR/proc.sh
. "$here/proc.sh"

if [ ! -d "$STATE/run" ]; then
  say "nothing to stop: no $STATE/run"
  exit 0
fi
NODE_BIN=$(cat "$STATE/run/node-bin" 2>/dev/null || true)

ctr_k8s() { "$NODE_BIN/ctr" --address "$CONTAINERD_SOCK" -n k8s.io "$@"; }

# 1. No new pods: stop Flux CD's controllers (kustomize-controller would apply deleted objects
#    again), Argo CD's (its controller would too) and the operator (it would make its Jobs
#    again), Kubernetes' controllers and the scheduler, then let the kubelet stop the pods the
#    normal way (CNI DEL, sandbox stop), for a bounded time.
"$here/fluxcd-down.sh"
"$here/argocd-down.sh"
"$here/operator-down.sh"
"$here/kueue-down.sh"
stop_component kube-controller-manager
stop_component kube-scheduler
if recorded_pid kube-apiserver >/dev/null && recorded_pid kubelet >/dev/null && [ -x "$NODE_BIN/kubectl" ]; then
  say "deleting all pods (the kubelet stops them)"
  "$NODE_BIN/kubectl" --kubeconfig "$KUBECONFIG_ADMIN" delete pods --all --all-namespaces \
    --grace-period=5 --wait=false --request-timeout=10s > /dev/null 2>&1 || true
  deadline=$((SECONDS + 30))
  while [ "$SECONDS" -lt "$deadline" ]; do
    running=$(ctr_k8s tasks ls 2>/dev/null | awk 'NR > 1 && $3 == "RUNNING"' | wc -l)
    [ "$running" = 0 ] && break
    sleep 0.5
  done
  [ "${running:-0}" = 0 ] || say "$running container(s) still running after 30s; killing them"
fi

# The nodes node.sh added (up.sh --nodes), each stopped and removed by node.sh.
for i in $(added_nodes); do
  "$here/node.sh" remove "$i" || say "node $i was not removed cleanly (above)"
done

# 2. The node and control plane, in reverse start order.
for ((i = ${#COMPONENTS[@]} - 1; i >= 0; i--)); do
  name=${COMPONENTS[i]}
  [ "$name" = containerd ] && continue
  stop_component "$name"
done

# 3. What is left of the pods: their processes (listed in the kubepods cgroups), then their
#    containerd tasks and containers, which makes the shims exit; then containerd.
pod_pids() {
  local d
  for d in /sys/fs/cgroup/*/kubepods; do
    [ -d "$d" ] && find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null
  done | sort -u
}
for pid in $(pod_pids); do kill -KILL "$pid" 2>/dev/null; done
if recorded_pid containerd >/dev/null; then
  for id in $(ctr_k8s tasks ls -q 2>/dev/null); do
    ctr_k8s tasks kill -s SIGKILL "$id" > /dev/null 2>&1
    ctr_k8s tasks delete -f "$id" > /dev/null 2>&1
  done
  for id in $(ctr_k8s containers ls -q 2>/dev/null); do ctr_k8s containers delete "$id" > /dev/null 2>&1; done
fi
stop_component containerd 15
# containerd shims that serve our socket (started by our containerd, detached from it): the
# program is containerd-shim* and one argument is exactly our socket's path.
our_processes() {
  local pid
  for pid in $(pgrep -f '^[^ ]*containerd-shim'); do
    { tr '\0' '\n' < "/proc/$pid/cmdline"; } 2>/dev/null | grep -qxF "$CONTAINERD_SOCK" && echo "$pid"
  done
}
for pid in $(our_processes); do
  [ "$pid" = $$ ] || { say "stopping leftover process $pid: $({ tr '\0' ' ' < "/proc/$pid/cmdline"; } 2>/dev/null)"; stop_pid leftover "$pid" 5; }
done

# 4. Mounts under $STATE (deepest first) and the pods' network namespaces (their veths go with them).
findmnt -rn -o TARGET | grep -F "$STATE/" | sort -r | while read -r m; do
  umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || say "cannot unmount $m"
done
for ns_path in /run/netns/cni-*; do
  [ -e "$ns_path" ] || continue
  ns=${ns_path#/run/netns/}
  grep -qxF "$ns" "$STATE/host-before/netns" 2>/dev/null && continue
  umount "/run/netns/$ns" 2>/dev/null
  rm -f "/run/netns/$ns"
done
# The kubelet's links to container logs under $STATE.
for link in /var/log/containers/*.log; do
  [ -L "$link" ] && case $(readlink "$link") in "$STATE"/*) rm -f "$link" ;; esac
done

# 5. cgroups the kubelet made.
for d in /sys/fs/cgroup/*/kubepods; do
  [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
done

# 6. kube-proxy's nftables tables, the bridge, CNI's result cache for our network.
for fam in ip ip6; do
  nft list table "$fam" kube-proxy > /dev/null 2>&1 && nft delete table "$fam" kube-proxy
done
if [ -f "$STATE/run/bridge" ] && ip link show "$BRIDGE" > /dev/null 2>&1; then ip link delete "$BRIDGE"; fi
rm -f /var/lib/cni/results/"$CNI_NETWORK"-*
# containerd's own loopback network caches a result per pod sandbox too, which a sandbox lost with
# a powered-off node (node.sh stop, then its Node deleted) never removes: those written since
# cluster-up are ours.
if [ -f "$STATE/host-before/sysctls" ]; then
  find /var/lib/cni/results -maxdepth 1 -name 'cni-loopback-*' -newer "$STATE/host-before/sysctls" -delete 2>/dev/null
fi
# Fixed-place directories that up.sh found absent go again, if empty (deepest first).
if [ -f "$STATE/host-before/absent-dirs" ]; then
  while read -r d; do
    [ -d "$d" ] && find "$d" -depth -type d -empty -delete 2>/dev/null
  done < "$STATE/host-before/absent-dirs"
fi

# 7. Host sysctls back as they were.
if [ -f "$STATE/host-before/sysctls" ]; then
  while read -r key value; do
    [ "$(cat "/proc/sys/$key")" = "$value" ] || echo "$value" > "/proc/sys/$key"
  done < "$STATE/host-before/sysctls"
fi

# 8. Check that nothing is left.
left=()
for name in "${FLUXCD_COMPONENTS[@]}" "${ARGOCD_COMPONENTS[@]}" "${OPERATOR_COMPONENTS[@]}" "${KUEUE_COMPONENTS[@]}" "${COMPONENTS[@]}"; do
  pid=$(recorded_pid "$name") && left+=("process $name (PID $pid)")
done
for pid in $(our_processes); do [ "$pid" = $$ ] || left+=("process $pid: $({ tr '\0' ' ' < "/proc/$pid/cmdline"; } 2>/dev/null)"); done
for pid in $(pod_pids); do left+=("pod process $pid"); done
while read -r m; do [ -n "$m" ] && left+=("mount $m"); done < <(findmnt -rn -o TARGET | grep -F "$STATE/")
for ns_path in /run/netns/*; do
  [ -e "$ns_path" ] || continue
  grep -qxF "${ns_path#/run/netns/}" "$STATE/host-before/netns" 2>/dev/null || left+=("network namespace $ns_path")
done
for d in /sys/fs/cgroup/*/kubepods; do [ -e "$d" ] && left+=("cgroup $d"); done
for ((i = 1; i < MAX_NODES; i++)); do
  for name in "kubelet-n$i" "containerd-n$i"; do pid=$(recorded_pid "$name") && left+=("process $name (PID $pid)"); done
  for d in /sys/fs/cgroup/*/"$(node_cgroup "$i")"; do [ -e "$d" ] && left+=("cgroup $d"); done
  ip link show "$(node_bridge "$i")" > /dev/null 2>&1 && left+=("bridge $(node_bridge "$i")")
done
[ -s "$STATE/run/nodes" ] && left+=("added nodes not removed: $(tr '\n' ' ' < "$STATE/run/nodes")")
ip link show "$BRIDGE" > /dev/null 2>&1 && left+=("bridge $BRIDGE")
ip -o link show type veth 2>/dev/null | grep -q "master $BRIDGE" && left+=("veth on $BRIDGE")
if [ -f "$STATE/host-before/nft-tables" ]; then
  while read -r t; do
    [ -n "$t" ] && ! grep -qxF "$t" "$STATE/host-before/nft-tables" && left+=("nftables $t")
  done < <(nft list tables)
fi
if [ -f "$STATE/host-before/sysctls" ]; then
  while read -r key value; do
    [ "$(cat "/proc/sys/$key")" = "$value" ] || left+=("sysctl $key = $(cat "/proc/sys/$key") (was $value)")
  done < "$STATE/host-before/sysctls"
fi
ls /var/lib/cni/results/"$CNI_NETWORK"-* > /dev/null 2>&1 && left+=("CNI results /var/lib/cni/results/$CNI_NETWORK-*")
if [ -f "$STATE/host-before/sysctls" ] && [ -n "$(find /var/lib/cni/results -maxdepth 1 -name 'cni-loopback-*' -newer "$STATE/host-before/sysctls" 2>/dev/null)" ]; then
  left+=("CNI results /var/lib/cni/results/cni-loopback-* written since cluster-up")
fi
for link in /var/log/containers/*.log; do
  [ -L "$link" ] && case $(readlink "$link") in "$STATE"/*) left+=("log link $link") ;; esac
done
if [ -f "$STATE/host-before/absent-dirs" ]; then
  while read -r d; do [ -e "$d" ] && left+=("directory $d (absent before cluster-up)"); done < "$STATE/host-before/absent-dirs"
fi

if [ ${#left[@]} -gt 0 ]; then
  echo "cluster-down: FAILED: these are left behind:" >&2
  printf '  %s\n' "${left[@]}" >&2
  exit 1
fi

# Only now, with no mount left under it, remove the state (not the logs).
find "$STATE" -mindepth 1 -maxdepth 1 ! -name log -exec rm -rf --one-file-system {} +
say "cluster stopped; nothing left behind (logs in $STATE/log)"
