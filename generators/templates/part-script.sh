{{- /* custom-script: commands.script, written out verbatim (quoted heredoc: no expansion). */ -}}
{{define "custom-script" -}}
{{- with .Script}}

# commands.script, written out verbatim; it runs instead of a command.
cat > {{shq .Path}} <<'{{.Delimiter}}'
{{.Body}}
{{.Delimiter}}
chmod +x {{shq .Path}}
{{- end}}
{{- end}}
