{{- /* broker-process: signals and the broker process: run_broker runs flux in the background and passes SIGTERM on. Used by wait.sh. */ -}}
{{define "broker-process" -}}
# bash as a container's PID 1 ignores SIGTERM unless it traps it, and nothing would pass it on:
# the broker would die by SIGKILL when the pod's grace period ends, leaving its state behind.
# So the broker runs in the background, in a process group of its own (with logging.timed its
# process is /usr/bin/time), and SIGTERM and SIGINT go to that group. Before the broker starts,
# they end the script.
broker_pid=""
signalled=""
on_signal() {
  if [[ -z "${broker_pid}" ]]; then
    exit {{.ExitPodRetry}}
  fi
  signalled=1
{{- if .Persistent}}
  if [[ "${index}" == "0" ]]; then
    tell_followers_lead_returns
  fi
{{- end}}
  kill -TERM -- "-${broker_pid}" 2> /dev/null || true
}
trap on_signal TERM INT
{{- if .Persistent}}

# The main broker's SIGTERM shuts the whole instance down, and every follower's broker exits 0
# with it. When only this pod is going (deleted, evicted), the Job starts it again, and the
# followers must then start their brokers again to rejoin it: tell them so, through the instance,
# before it goes. When the whole cluster is deleted, the followers get their own SIGTERM and stop
# anyway. A user's flux shutdown sends no SIGTERM: the followers then end as before.
tell_followers_lead_returns() {
  if command -v timeout > /dev/null; then
    FLUX_URI={{shq (print "local://" .Pod.Socket)}} timeout 5 \
      flux exec -r all -x 0 --noinput touch {{shq .Pod.LeadReturns}} > /dev/null 2>&1 || true
  fi
}
{{- end}}
# The markers of this container's previous run, if it restarted: this pod must not be Ready
# again before its new broker runs, nor take an old message of its main broker for a new one.
rm -f {{shq .Pod.Joined}}{{if .Persistent}} {{shq .Pod.LeadReturns}}{{end}}

# run_broker runs flux (its arguments) and returns its exit status. While it runs, the join
# watchdog (watch_join) marks the broker joined, or reports that it does not join.
run_broker() {
  set -m
  "$@" &
  broker_pid=$!
  set +m
{{- if .Persistent}}
  watch_join &
  local joiner=$!
  watch_main &
{{- else}}
  watch_join &
{{- end}}
  local watcher=$! status=0
  # wait returns early when a trapped signal arrives: wait again until the broker has exited,
  # then once more for its exit status.
  while kill -0 "${broker_pid}" 2> /dev/null; do
    wait "${broker_pid}" || true
  done
  wait "${broker_pid}" || status=$?
{{- if .Timed}}
  # /usr/bin/time dies of SIGTERM at once; the broker it started must not be cut short.
  while kill -0 -- "-${broker_pid}" 2> /dev/null; do
    sleep 1
  done
{{- end}}
  kill "${watcher}"{{if .Persistent}} "${joiner}"{{end}} 2> /dev/null || true
  wait "${watcher}"{{if .Persistent}} "${joiner}"{{end}} 2> /dev/null || true
  # Stopped by a signal (the pod is deleted, evicted or its Job shrinks): exit {{.ExitPodRetry}} (128+SIGTERM)
  # whatever the broker's status. A pod that ends with 0 counts as a completed index of the
  # Indexed Job, which is then never replaced: a deleted broker pod of a persistent cluster would
  # not come back. And {{.ExitPodRetry}} is the status that the Job's pod failure policy, if it has one,
  # counts as a pod to start again rather than a failed command.
  if [[ -n "${signalled}" ]]; then
    echo "${host}: stopped by SIGTERM; the broker exited with ${status}; exiting {{.ExitPodRetry}}" >&2
    exit {{.ExitPodRetry}}
  fi
  return "${status}"
}
{{- end}}
