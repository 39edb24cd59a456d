{{- /* hook: one commands.* hook, inserted as shell code (hooks are scripts). */ -}}
{{define "hook" -}}
{{- if .Code}}

# commands.{{.Name}}
{{- if .Redirect}}
{
{{.Code}}
} {{.Redirect}}
{{- else}}
{{.Code}}
{{- end}}
{{- end}}
{{- end}}
