{{- /* view: where the flux view and the config tree are. Used by wait.sh and start.sh. */ -}}
{{define "view" -}}
# The flux view (copied to the shared volume by the init container) and the config tree.
viewbase={{shq .MountPath}}
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

# Software the view brings along goes to /opt/software.
if [[ -d "${viewbase}/software" ]]; then
  mkdir -p /opt/software
  cp -R "${viewbase}/software/." /opt/software/{{if .Quiet}} > /dev/null 2>&1{{end}} || true
fi
{{- end}}
