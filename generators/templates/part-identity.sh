{{- /* identity: this pod's hostname and index, read at run time. Used by init.sh and wait.sh. */ -}}
{{define "identity" -}}
# Who am I? Pods of an Indexed Job are named <job name>-<index> and get JOB_COMPLETION_INDEX.
# Read at run time, never baked in: kustomize namePrefix or a GitOps target namespace may
# rename the Job after rendering.
host="${HOSTNAME:-$(hostname)}"
index="${JOB_COMPLETION_INDEX:-${host##*-}}"
{{- end}}
