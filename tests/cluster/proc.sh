# Process control shared by the cluster scripts (up.sh, down.sh, fluxcd-up.sh, fluxcd-down.sh,
# operator-up.sh, operator-down.sh), sourced after env.sh. The sourcing script sets PROG, the name its messages start with.
# shellcheck shell=bash

t0=$(date +%s%N)
# say MESSAGE: progress on stderr, with the time since the script started.
say() { local ms=$((($(date +%s%N) - t0) / 1000000)); printf '%s: [%3d.%01ds] %s\n' "$PROG" $((ms / 1000)) $((ms % 1000 / 100)) "$*" >&2; }

# --- starting ------------------------------------------------------------------------------------
# start NAME COMMAND...: runs COMMAND in its own session, output in $STATE/log/NAME.log, PID in
# $STATE/run/NAME.pid (the stop scripts stop exactly these PIDs).
# $STATE/run/NAME.pid holds "PID START-TIME" so that a reused PID is never signalled.
start() {
  local name=$1; shift
  setsid "$@" < /dev/null > "$STATE/log/$name.log" 2>&1 &
  local pid=$! stat
  stat=$(cat "/proc/$pid/stat" 2>/dev/null) || stat="x x x x x x x x x x x x x x x x x x x x x gone"
  stat=${stat##*) }
  # shellcheck disable=SC2086
  set -- $stat
  echo "$pid ${20}" > "$STATE/run/$name.pid"
}
pid_of() { local pid _; read -r pid _ < "$STATE/run/$1.pid"; echo "$pid"; }
# fail NAME WHY: names the component, shows the tail of its log, and exits (the caller's EXIT trap
# stops what was started).
fail() {
  echo "$PROG: $1 FAILED TO START: $2" >&2
  echo "---- last 40 lines of $STATE/log/$1.log ----" >&2
  tail -n 40 "$STATE/log/$1.log" >&2 || true
  echo "----" >&2
  exit 1
}
# stop_on_failure DOWN: from here on, an exit with a non-zero status runs the script DOWN to stop
# what was started; `trap - EXIT` ends that once all is up.
stop_on_failure() {
  STOP_ON_FAILURE=$1
  trap stop_on_failure_exit EXIT
}
stop_on_failure_exit() {
  local rc=$?
  trap - EXIT
  if [ "$rc" != 0 ]; then
    echo "$PROG: failed; stopping what was started (${STOP_ON_FAILURE##*/})" >&2
    "$STOP_ON_FAILURE" >&2 || true
  fi
  exit "$rc"
}
# wait_for NAME SECONDS COMMAND...: waits until COMMAND succeeds while NAME's process lives.
wait_for() {
  local name=$1 limit=$2; shift 2
  local deadline=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    kill -0 "$(pid_of "$name")" 2>/dev/null || fail "$name" "the process exited"
    [ "$SECONDS" -lt "$deadline" ] || fail "$name" "not ready after ${limit}s (waited for: $*)"
    sleep 0.2
  done
  say "$name ready"
}

# --- stopping ------------------------------------------------------------------------------------
# recorded_pid NAME: the PID in $STATE/run/NAME.pid, only while it still is the process start()
# started (same start time), so a reused PID is never signalled.
recorded_pid() {
  local f=$STATE/run/$1.pid pid start
  [ -f "$f" ] || return 1
  read -r pid start < "$f"
  [ -r "/proc/$pid/stat" ] || return 1
  local stat; stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 1
  stat=${stat##*) }                      # fields after "pid (comm) "
  # shellcheck disable=SC2086
  set -- $stat
  [ "$1" != Z ] || return 1              # a zombie has exited already
  [ "${20}" = "$start" ] || return 1     # field 22 overall: start time
  echo "$pid"
}
alive() { kill -0 "$1" 2>/dev/null && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]; }
# stop_pid NAME PID SECONDS: SIGTERM, then SIGKILL after SECONDS.
stop_pid() {
  local name=$1 pid=$2 limit=$3 i
  kill -TERM "$pid" 2>/dev/null || return 0
  for ((i = 0; i < limit * 10; i++)); do alive "$pid" || return 0; sleep 0.1; done
  say "$name (PID $pid) still running after ${limit}s: SIGKILL"
  kill -KILL "$pid" 2>/dev/null
  for ((i = 0; i < 50; i++)); do alive "$pid" || return 0; sleep 0.1; done
}
# stop_component NAME [SECONDS]: stops NAME's recorded process, if it still runs.
stop_component() {
  local pid
  pid=$(recorded_pid "$1") || return 0
  stop_pid "$1" "$pid" "${2:-10}"
  say "$1 stopped"
}

# stop_components NAME...: stops each recorded component, in the reverse of the order given, and
# removes its pid file; returns 1, naming it, if one is still running afterwards.
stop_components() {
  local status=0 i name pid
  for ((i = $# ; i >= 1; i--)); do
    name=${!i}
    [ -f "$STATE/run/$name.pid" ] || continue
    stop_component "$name"
    if pid=$(recorded_pid "$name"); then
      echo "$PROG: FAILED: $name (PID $pid) is still running" >&2
      status=1
    else
      rm -f "$STATE/run/$name.pid"
    fi
  done
  return "$status"
}

# --- components beside a running cluster ---------------------------------------------------------
# crds_established PATH: applies the CRDs in PATH (a file or directory) server-side and waits until
# they are Established. kubectl wait fails at once, instead of waiting, while a new CRD has no
# status yet (".status.conditions accessor error"): a few tries, then the last error.
crds_established() {
  local out
  kubectl apply --server-side -f "$1" > /dev/null
  for _ in 1 2 3 4 5; do
    out=$(kubectl wait --for=condition=Established --timeout=60s -f "$1" 2>&1) && return 0
    sleep 1
  done
  echo "$PROG: the CRDs in $1 are not Established: $out" >&2
  exit 1
}

# need_cluster_without NAME...: for fluxcd-up.sh, argocd-up.sh and operator-up.sh. Exits 1 unless a cluster runs
# from $STATE and answers, and none of NAME... runs yet; then defines kubectl (the cluster's own,
# as its admin).
need_cluster_without() {
  if ! recorded_pid kube-apiserver > /dev/null || [ ! -f "$STATE/run/node-bin" ]; then
    echo "$PROG: no cluster is running from $STATE (start one with make cluster-up)" >&2
    exit 1
  fi
  NODE_BIN=$(cat "$STATE/run/node-bin")
  kubectl() { "$NODE_BIN/kubectl" --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }
  if ! kubectl --request-timeout=5s get --raw /readyz > /dev/null 2>&1; then
    echo "$PROG: the API server of the cluster in $STATE does not answer" >&2
    exit 1
  fi
  local name pid
  for name in "$@"; do
    if pid=$(recorded_pid "$name"); then
      echo "$PROG: $name is running already (PID $pid); ${PROG%-up}-down.sh stops it" >&2
      exit 1
    fi
  done
}
