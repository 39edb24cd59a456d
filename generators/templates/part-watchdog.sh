{{- /* join-watchdog: how the broker is marked joined, and watch_join, which reports one that does not join. Used by wait.sh (run_broker). */ -}}
{{define "join-watchdog" -}}
{{template "broker-state" .}}

# The joined marker, which the startupProbe (broker-ready.sh) looks for. A worker's broker writes
# it itself: flux runs the rc1.d scripts of the directories in FLUX_RC_EXTRA as the last step of
# rc1, which a worker's broker starts once it has joined its parent, and this hook there touches
# the marker. The main broker has no parent: it has joined once the instance runs (every worker
# is online then), which one state-machine.wait RPC tells. Nothing else polls: each flux Python
# start costs about 0.1 s of CPU, and a node starting many brokers at once has none to spare.
# (An rc1 of the user's own, broker.rc1_path, must run rc1.d as flux's does.)
#
# add_join_hook puts the hook in place for a worker's broker.
add_join_hook() {
  local hook={{shq .Pod.JoinHookScript}}
  mkdir -p "${hook%/*}"
  cat > "${hook}" <<'JOINED'
#!/bin/sh
# rc1.d hook of minicluster-fn: this worker's broker has joined the instance.
touch {{shq .Pod.Joined}} || true
JOINED
  chmod 0755 "${hook}"
  export FLUX_RC_EXTRA="${FLUX_RC_EXTRA:+${FLUX_RC_EXTRA}:}"{{shq .Pod.JoinHook}}
}

# takes_connection ADDRESS PORT: whether ADDRESS takes a TCP connection on PORT within 2 s (an
# address that does not answer drops the attempt rather than refusing it). Needs timeout(1).
takes_connection() {
  # shellcheck disable=SC2016 # $1 and $2 are bash -c's arguments
  timeout 2 bash -c 'exec 3<> "/dev/tcp/$1/$2"' bash "$1" "$2" 2> /dev/null
}

# parent_report says where a worker that has not joined is stuck: the address its broker connects
# to, what that name resolves to in this pod, and whether the port takes a TCP connection (a name
# that does not resolve, an address that does not answer, or, when it answers, certificates). A
# lookup that takes over a second is named too: the broker looks its parent's name up again on
# every retry, so DNS that answers slowly or drops queries delays its joining by as much.
parent_report() {
  local uri name port addr="" reach slow="" started ms
  uri="$(FLUX_URI={{shq (print "local://" .Pod.Socket)}} flux getattr tbon.parent-endpoint 2> /dev/null)" || return 0
  if [[ "${uri}" != tcp://*:* ]]; then
    return 0
  fi
  name="${uri#tcp://}"
  port="${name##*:}"
  name="${name%:*}"
  if ! command -v getent > /dev/null; then
    echo "${host}: its parent broker is ${uri}."
    return 0
  fi
  # The lookup alone is timed: flux getattr above is a process start too, slow on a busy node.
  started="${EPOCHREALTIME:-}"
  started="${started//[!0-9]/}"
  addr="$(getent hosts "${name}" 2> /dev/null)" || addr=""
  addr="${addr%%[[:space:]]*}"
  # EPOCHREALTIME (microseconds) is bash 5's; an older bash leaves the lookup untimed.
  if [[ -n "${started}" && -n "${EPOCHREALTIME:-}" ]]; then
    ms=$(( (${EPOCHREALTIME//[!0-9]/} - started) / 1000 ))
    if ((ms > 1000)); then
      slow=" (the lookup took $((ms / 1000)).$((ms % 1000 / 100)) s: DNS in this pod answers slowly or drops queries, and the broker looks the name up again on every retry)"
    fi
  fi
  if [[ -z "${addr}" ]]; then
    echo "${host}: its parent broker is ${uri}; ${name} does not resolve in this pod${slow}."
    return 0
  fi
  reach=""
  if command -v timeout > /dev/null; then
    reach=", and ${addr}:${port} does not take a TCP connection within 2 s"
    if takes_connection "${addr}" "${port}"; then
      reach=", and ${addr}:${port} takes a TCP connection"
    fi
  fi
  echo "${host}: its parent broker is ${uri}; ${name} resolves to ${addr} in this pod${slow}${reach}."
}

# watch_join marks the main broker joined once it runs. Until a broker has joined, it says every
# minute, from 30 s on, that it has not: flux itself retries quietly forever, e.g. when the pods
# hold different CURVE certificates.
watch_join() {
  local waited=0 next=30 state status
  while :; do
    if [[ "${index}" == "0" ]]; then
      status=0
      broker_wait_run "$((next - waited))" 2> /dev/null || status=$?
      case "${status}" in
        0)
          touch {{shq .Pod.Joined}}
          return 0
          ;;
        2) waited=${next} ;;
        *)
          # The broker does not listen yet: ask again in a second.
          sleep 1
          waited=$((waited + 1))
          ;;
      esac
      if ((waited < next)); then
        continue
      fi
    else
      sleep "$((next - waited))"
      waited=${next}
      if [[ -e {{shq .Pod.Joined}} ]]; then
        return 0
      fi
    fi
    next=$((waited + 60))
    state="$(broker_state 2> /dev/null)" || state="not answering"
    if [[ "${index}" == "0" ]]; then
      echo "${host}, the main broker: the instance has not started after ${waited}s (broker state: ${state}); it waits for the other brokers to join. Check their logs: every pod must mount the same CURVE certificate." >&2
    else
      echo "${host} has not joined the main broker after ${waited}s (broker state: ${state}); flux keeps trying. Check that the main broker (index 0) runs and is reachable, and that every pod mounts the same CURVE certificate." >&2
      parent_report >&2
    fi
  done
}
{{- end}}
