{{- /* view: where the flux view and the config tree are. Used by wait.sh and start.sh. */ -}}
{{define "view" -}}
# The flux view (copied to the shared volume by the init container) and the config tree.
viewbase={{shq .Pod.Base}}
{{- if .ViewDisabled}}
# shellcheck disable=SC2034 # unused with flux.container.disable, kept for commands.* hooks
{{- end}}
viewroot="${viewbase}/view"
configroot="${viewbase}/config"
{{- if not .ViewDisabled}}
{{- if not .Quiet}}
echo "Flux install root: ${viewroot}"
{{- end}}
# Appended, so that software of the application image comes first.
export PATH="${PATH}:${viewroot}/bin"
{{- end}}

# The software the view brings along (the init container copied it to ${viewbase}/software) is
# mounted at /opt/software, where the view's links point: nothing to copy here.
{{- end}}
