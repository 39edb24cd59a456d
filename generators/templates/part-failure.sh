{{- /* failed-command: how the main broker's container ends after its command failed. Used by wait.sh. */ -}}
{{define "failed-command" -}}
# command_failed ends the main broker's container after its command failed; $1 is the status flux
# start returned, its initial program's. The container exits with it, and the Job's pod failure
# policy fails the Job, naming the status in its condition; the termination message (kubectl
# describe pod, kubectl get pod -o yaml) says what failed.
command_failed() {
  local status=$1 code=$1 message
{{- if not .Batch}}
  message="the command failed with exit status ${status}"
{{- else if .Batch.Raw}}
  message="the batch script failed with exit status ${status}"
{{- else}}
  # The batch job's status is the number of its jobs that failed, at most {{.BatchNotRun}}; {{.BatchNotRun}} also
  # when flux batch failed or the batch job ended with an exception.
{{- if lt (len .Batch.Lines) .BatchNotRun}}
  if ((status > {{len .Batch.Lines}})); then
    message="the batch job failed (exit status ${status}; see the log)"
{{- else}}
  if ((status == {{.BatchNotRun}})); then
    message="{{.BatchNotRun}} or more of the {{len .Batch.Lines}} batch jobs failed, or the batch job did (see the log)"
{{- end}}
  else
    message="${status} of the {{len .Batch.Lines}} batch jobs failed"
  fi
{{- end}}
  if ((status == {{.ExitPodRetry}})); then
    # The pod failure policy reads {{.ExitPodRetry}} as a pod stopped from outside and starts it again.
    code=1
    message+="; the container exits ${code} instead, as ${status} would start this pod again"
  fi
  echo "${host}: ${message}" >&2
  printf '%s\n' "${message}" > {{shq .Pod.TerminationLog}} 2> /dev/null || true
  exit "${code}"
}
{{- end}}
