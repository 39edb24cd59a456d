{{- /* custom-script: commands.script, through an unquoted heredoc as the operator writes it. */ -}}
{{define "custom-script" -}}
{{- with .Script}}

# commands.script, written as the operator writes it: through an unquoted here-document, so $VAR,
# $(...) and `...` expand now, and \$, \` and \\ become $, ` and \ (the operator's documentation
# has users write \$VAR for what must expand when the script runs). It runs instead of a command.
# shellcheck disable=SC2016,SC2034,SC1083 # user text; may read or escape this script's variables
cat > {{shq .Path}} <<{{.Delimiter}}
{{.Body}}
{{.Delimiter}}
chmod +x {{shq .Path}}
{{- end}}
{{- end}}
