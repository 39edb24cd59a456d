{{- /* launch: the main broker runs flux start with the command (or a persistent broker), the others join it. Used by wait.sh. */ -}}
{{define "launch" -}}
{{- if not .Quiet}}
# shell_words prints its arguments as one shell command line, each word quoted when it needs it:
# the echoed command line is the array that runs.
shell_words() {
  local word line="" quote="'" escaped="'\\''"
  for word in "$@"; do
    if [[ -z "${word}" || "${word}" == *[!a-zA-Z0-9_./:=@%+,-]* ]]; then
      word="'${word//${quote}/${escaped}}'"
    fi
    line+="${line:+ }${word}"
  done
  printf '%s\n' "${line}"
}

{{end -}}
{{if .FailWithCommand -}}
# The status of the main broker's command (flux start returns its initial program's).
command_status=0
{{end -}}
if [[ "${index}" == "0" ]]; then
{{- if .Batch}}
  # Batch mode: the command's lines become a batch script that flux batch runs. Written through
  # an unquoted here-document: $VAR and \$VAR mean what they meant in the operator's echo "...".
  rm -f flux-job.batch
{{- if and .FailWithCommand (not .Batch.Raw)}}
  {
{{- end}}
  # shellcheck disable=SC2154,SC2016 # user text: variables of the broker's environment
  cat {{- if not (and .FailWithCommand (not .Batch.Raw))}} > flux-job.batch{{end}} <<{{.Batch.Delimiter}}
#!/bin/bash
{{- if .Batch.Raw}}
{{- range .Batch.Lines}}
{{.Text}}
{{- end}}
{{- else}}
{{- range .Batch.Lines}}
flux submit --flags waitable --error={{shq .Error}} --output={{shq .Output}} {{.Text}}
{{- end}}
flux queue idle
flux jobs -a
{{- end}}
{{.Batch.Delimiter}}
{{- if and .FailWithCommand (not .Batch.Raw)}}
  # Every job above is waitable: the batch job's exit status is the number that failed (at most
  # {{.BatchNotRun}}), which flux job status passes on to the main broker.
  cat <<'{{.Batch.Delimiter}}'
failed=0
for ((i = 0; i < {{len .Batch.Lines}}; i++)); do
  status=0
  flux job wait > /dev/null || status=$?
  case "${status}" in
    0) ;;
    2) break ;;
    *) failed=$((failed + 1)) ;;
  esac
done
exit $((failed < {{.BatchNotRun}} ? failed : {{.BatchNotRun}}))
{{.Batch.Delimiter}}
  } > flux-job.batch
{{- end}}
  chmod +x flux-job.batch
{{- end}}
{{- template "hook" .Hooks.BrokerPre}}
{{- if not .Quiet}}

  echo "Command provided is: ${command}"
{{- end}}
{{- if not .Command}}

  # No command: a persistent (interactive) broker.
  broker=(flux broker --config-path "${cfg}" "${brokerOptions[@]}")
{{- if not .Quiet}}
  echo "Running in interactive mode"
  shell_words "${broker[@]}"
{{- end}}
  run_broker "${broker[@]}"
{{- else}}

  # The broker; the job below is its initial program, and the instance ends when the job does.
{{- if .Wrap}}
  # shellcheck disable=SC2054 # flux.wrap is one word, its commas separate wrapper arguments
{{- end}}
  broker=(flux start{{with .Wrap}} {{shq (print "--wrap=" .)}}{{end}} -o --config "${cfg}" "${brokerOptions[@]}")
{{- if not .Launcher}}

  # Flags of flux submit / flux batch.
  flags=({{.NodeSpec}}{{with .OptionFlags}} {{.}}{{end}}{{if .Debug}} -vvv{{end}})
{{- if not .Quiet}}
  echo "Flags for flux are ${flags[*]}"
{{- end}}
{{- end}}
{{- if .Batch}}
{{- if not .Quiet}}
  echo "Prepared batch job:"
  cat flux-job.batch
{{- end}}
  # shellcheck disable=SC2016 # "$@" is expanded by sh -c
{{- if .FailWithCommand}}
  # flux job status exits with the batch job's status{{if not .Batch.Raw}}, the number of its jobs that failed{{end}};
  # with {{.BatchNotRun}} when flux batch fails or the batch job ends with an exception.
  job=({{with .Prefix}}{{.}} {{end}}sh -c 'id=$(flux batch "$@" ./flux-job.batch) || exit {{.BatchNotRun}}; flux job status -e {{.BatchNotRun}} "${id}"' sh "${flags[@]}")
{{- else}}
  job=({{with .Prefix}}{{.}} {{end}}sh -c 'flux batch "$@" --flags waitable ./flux-job.batch && flux job wait --all' sh "${flags[@]}")
{{- end}}
{{- else}}

  # Split the command into words (see above), without running it.
  command_args=()
  if ! eval "command_args=(
${command}
)"; then
    echo "cannot parse containers[{{.Index}}].command as a command line: ${command}" >&2
    exit 1
  fi
{{- if .Launcher}}
  job=({{with .Prefix}}{{.}} {{end}}"${command_args[@]}")
{{- else}}
  job=({{with .Prefix}}{{.}} {{end}}{{.SubmitCommand}} "${flags[@]}" --quiet --watch "${command_args[@]}")
{{- end}}
{{- end}}
{{- with .NoJobCleanupEnv}}

  # The initial program returns only after {{if $.Batch}}every job it submitted{{else}}the command's job{{end}} has ended.
  # So the instance has no job left then for flux-core's cleanup commands to stop (queue stop,
  # acquire-mute, cancel, queue idle): four Python processes on the main broker's way out that
  # only delay the Job's completion. With {{.}} set, rc1 pushes none; the job does not inherit it.
  broker=(env {{.}}=t "${broker[@]}")
  job=(env -u {{.}} "${job[@]}")
{{- end}}
{{- if not .Quiet}}
  echo "{{if .Batch}}Batch{{else if .Launcher}}Launcher{{else}}Submit{{end}} mode: $(shell_words "${broker[@]}" "${job[@]}")"
{{- end}}
  run_broker {{if .Timed}}/usr/bin/time -f "FLUXTIME fluxstart wall time %E" {{end}}"${broker[@]}" {{if .Timed}}/usr/bin/time -f "FLUXTIME fluxsubmit wall time %E" {{end}}"${job[@]}"{{if and .Batch .Quiet}} > /dev/null 2>&1{{end}}{{if .FailWithCommand}} || command_status=$?{{end}}
{{- end}}
else
{{- template "hook" .Hooks.WorkerPre}}

  # Workers join the main broker. flux retries the connection by itself until the main broker
  # answers, resolving its name again each time, so one start is enough; when it fails, the
  # container fails and kubelet restarts it as spec.pod.restartPolicy says.
  add_join_hook
  broker=(flux start -o --config "$(main_config)" "${brokerOptions[@]}")
{{- if not .Quiet}}
  shell_words "${broker[@]}"
{{- end}}
  retval=0
  run_broker "${broker[@]}" || retval=$?
{{- if .Persistent}}
  # The main broker's pod went and the Job starts it again: start this broker again, as often as
  # that happens, to join it. Either the main broker said so before it stopped, or watch_main
  # found a new main broker (both leave the lead-returns marker), or the new main broker turned
  # this broker away after it had joined the old one (it exits with an error then).
  while [[ -e {{shq .Pod.LeadReturns}} ]] || [[ "${retval}" -ne 0 && -e {{shq .Pod.Joined}} ]]; do
    rm -f {{shq .Pod.LeadReturns}} {{shq .Pod.Joined}}
    echo "${host}: the main broker's pod stopped and the Job starts it again; starting this broker again to rejoin it (it exited with ${retval})"
    retval=0
    broker=(flux start -o --config "$(main_config)" "${brokerOptions[@]}")
    run_broker "${broker[@]}" || retval=$?
  done
{{- end}}
  if [[ "${retval}" -eq 0 ]]; then
    echo "The follower worker exited cleanly. Goodbye!"
{{- if .CompleteWorkers}}
  else
    # flux.completeWorkers: the pod completes, it is not restarted.
    echo "The follower worker exited with ${retval}; not retrying (completeWorkers)."
{{- else}}
  else
{{- if .FailWithCommand}}
    # Not the command: the Job starts this pod again (its pod failure policy fails the Job only
    # on the main broker's failed command).
    echo "The follower worker exited with ${retval}; exiting {{.ExitPodRetry}}, so that the Job starts this pod again." >&2
    exit {{.ExitPodRetry}}
{{- else}}
    echo "The follower worker exited with ${retval}." >&2
    exit "${retval}"
{{- end}}
{{- end}}
  fi
fi
{{- end}}
