{{- /* paths: Python, HOME and the helper files of the view. Used by wait.sh and start.sh unless flux.container.disable. */ -}}
{{define "paths" -}}
# Python of the view (flux's Python bindings live there).
foundroot=""
for candidate in "${viewroot}"/lib/python3*; do
  if [[ -d "${candidate}" ]]; then
    foundroot="${candidate}"
    break
  fi
done
pythonversion=""
if [[ -n "${foundroot}" ]]; then
  pythonversion="${viewroot}/bin/${foundroot##*/}"
fi
{{- if not .Quiet}}
echo "Python version: ${pythonversion}"
echo "Python root: ${foundroot}"
{{- end}}

# Fall back to a home directory of our own.
if [[ "${HOME:-/}" == "/" ]]; then
  export HOME={{shq .Pod.Home}}
  export USER=flux-operator
fi

{{if not .ViewFromImage -}}
# Link the view's Python into lib (its bin links do not survive the copy).
if [[ -n "${pythonversion}" && -f "${pythonversion}" ]]; then
  rm -f "${viewroot}/bin/python3" "${viewroot}/bin/python"
  ln -sfn "${pythonversion}" "${viewroot}/lib/python" || true
  ln -sfn "${pythonversion}" "${viewroot}/lib/python3" || true
fi
{{- else -}}
# The view is the view image's, read-only and whole: its links are as the image has them.
{{- end}}

{{if .PythonPath -}}
pythonpath={{shq .PythonPath}}
{{- else -}}
pythonpath="${foundroot}/site-packages"
{{- end}}
export PYTHONPATH="${PYTHONPATH:+${PYTHONPATH}:}${pythonpath}"
{{- if not .Quiet}}
echo "PYTHONPATH is ${PYTHONPATH}"
echo "PATH is ${PATH}"
{{- end}}
{{- if not .SchedulerSimple}}
export FLUX_RC_EXTRA="${viewroot}/etc/flux/rc1.d"
{{- end}}

# Helper scripts in the shared volume, each written whole (never appended) and moved into place.
cat > {{shq .Pod.LoadFluxion}}".$$" <<'MINICLUSTER_FN_EOF'
flux module remove sched-simple
flux module load sched-fluxion-resource
flux module load sched-fluxion-qmanager
MINICLUSTER_FN_EOF
mv -f {{shq .Pod.LoadFluxion}}".$$" {{shq .Pod.LoadFluxion}}

{{if .Environment -}}
# shellcheck disable=SC2016 # flux.environment values are literal
{{end -}}
{
  echo '#!/bin/bash'
  printf 'export PATH=%q\n' "${PATH}"
  printf 'export PYTHONPATH=%q\n' "${PYTHONPATH}"
  printf 'export LD_LIBRARY_PATH=%q\n' "${LD_LIBRARY_PATH:+${LD_LIBRARY_PATH}:}${viewroot}/lib"
  printf 'export fluxsocket=%q\n' {{shq (print "local://" .Pod.Socket)}}
{{- if .Environment}}
  # flux.environment, sorted by name; values are literal.
{{- range .Environment}}
  printf 'export %s=%q\n' {{shq .Name}} {{shq .Value}}
{{- end}}
{{- end}}
} > {{shq .Pod.ViewEnv}}".$$"
mv -f {{shq .Pod.ViewEnv}}".$$" {{shq .Pod.ViewEnv}}

{
  echo '#!/bin/bash'
  printf '. %q\n' {{shq .Pod.ViewEnv}}
  # shellcheck disable=SC2016 # expanded when flux-connect.sh runs, not now
  echo 'flux proxy "${fluxsocket}" bash'
} > {{shq .Pod.Connect}}".$$"
mv -f {{shq .Pod.Connect}}".$$" {{shq .Pod.Connect}}
{{- end}}
