{{- /* join-watchdog: watch_join reports a broker that does not join. Used by wait.sh (run_broker). */ -}}
{{define "join-watchdog" -}}
{{template "broker-state" .}}

# watch_join polls the broker's state until it runs, and says every minute, from 30 s on, that it
# does not: flux itself retries quietly forever, e.g. when the pods hold different CURVE
# certificates.
watch_join() {
  local waited=0 next=30 state
  while sleep 5; do
    waited=$((waited + 5))
    state="$(broker_state 2> /dev/null)" || state="not answering"
    if [[ "${state}" == run ]]; then
      return 0
    fi
    if ((waited < next)); then
      continue
    fi
    next=$((waited + 60))
    if [[ "${index}" == "0" ]]; then
      echo "${host}, the main broker: the instance has not started after ${waited}s (broker state: ${state}); it waits for the other brokers to join. Check their logs: every pod must mount the same CURVE certificate." >&2
    else
      echo "${host} has not joined the main broker after ${waited}s (broker state: ${state}); flux keeps trying. Check that the main broker (index 0) runs and is reachable, and that every pod mounts the same CURVE certificate." >&2
    fi
  done
}
{{- end}}
