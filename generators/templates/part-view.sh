{{- /* view: where the flux view and the config tree are. Used by wait.sh and start.sh. */ -}}
{{define "view" -}}
{{if .ViewFromImage -}}
# The shared volume, the flux view (a link to it in the view image's volume, which flux-init.sh
# wrote) and the config tree. The script names the files in them by their paths; commands.*
# hooks may read these variables.
{{else -}}
# The shared volume, the flux view (copied there by the init container) and the config tree. The
# script names the files in them by their paths; commands.* hooks may read these variables.
{{end -}}
# shellcheck disable=SC2034 # for commands.* hooks
viewbase={{shq .Pod.Base}}
{{- if .ViewDisabled}}
# shellcheck disable=SC2034 # unused with flux.container.disable, kept for commands.* hooks
{{- end}}
viewroot={{shq .Pod.View}}
# shellcheck disable=SC2034 # for commands.* hooks
configroot={{shq .Pod.Config}}
{{- if not .ViewDisabled}}
{{- if not .Quiet}}
echo "Flux install root: ${viewroot}"
{{- end}}
# Appended, so that software of the application image comes first.
export PATH="${PATH}:${viewroot}/bin"
{{- end}}

{{if .ViewFromImage -}}
# The software the view brings along is mounted from the view image's volume at {{.Pod.Software}},
# where the view's links point: nothing to copy here.
{{- else -}}
# The software the view brings along (the init container copied it to {{.Pod.ViewSoftware}}) is
# mounted at {{.Pod.Software}}, where the view's links point: nothing to copy here.
{{- end}}
{{- end}}
