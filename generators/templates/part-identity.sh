{{- /* identity: who this pod is, read at run time. Used by init.sh and wait.sh. */ -}}
{{define "identity" -}}
# Who am I? Pods of an Indexed Job are named <job name>-<index> and get JOB_COMPLETION_INDEX.
# The job name is derived here, at run time, not baked in: kustomize namePrefix or a GitOps
# target namespace may rename things after rendering.
host="${HOSTNAME:-$(hostname)}"
index="${JOB_COMPLETION_INDEX:-${host##*-}}"
jobname="${host%-"${index}"}"
{{- end}}
