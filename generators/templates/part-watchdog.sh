{{- /* join-watchdog: watch_join marks the broker joined, and reports one that does not join. Used by wait.sh (run_broker). */ -}}
{{define "join-watchdog" -}}
{{template "broker-state" .}}

# watch_join waits for the broker to run, then writes the marker that the startupProbe
# (broker-ready.sh) looks for. It waits with one RPC that the broker answers when it runs, not by
# polling: each check starts flux's Python, and a node starting many brokers at once has no CPU
# to spare. Until the broker runs, it says every minute, from 30 s on, that it does not: flux
# itself retries quietly forever, e.g. when the pods hold different CURVE certificates.
watch_join() {
  local waited=0 next=30 state status
  while :; do
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
    next=$((waited + 60))
    state="$(broker_state 2> /dev/null)" || state="not answering"
    if [[ "${index}" == "0" ]]; then
      echo "${host}, the main broker: the instance has not started after ${waited}s (broker state: ${state}); it waits for the other brokers to join. Check their logs: every pod must mount the same CURVE certificate." >&2
    else
      echo "${host} has not joined the main broker after ${waited}s (broker state: ${state}); flux keeps trying. Check that the main broker (index 0) runs and is reachable, and that every pod mounts the same CURVE certificate." >&2
    fi
  done
}
{{- end}}
