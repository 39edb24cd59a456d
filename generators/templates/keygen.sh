{{- /* keygen.sh: the keygen container's command (sh -c): finds flux and a Python in the image and runs the publisher with them. */ -}}
#!/bin/sh
# The keygen Job's script, run by sh -c in the image that holds flux (its arguments follow $0).
# It finds flux and a Python 3 there and runs the publisher below with them; the publisher runs
# flux keygen and creates the certificate object. The first arguments say where to look:
#   --view DIR  a Flux view: DIR/bin/flux, and the view's own Python DIR/bin/python3.X beside its
#               DIR/lib/python3.X (as the operator's scripts find it), else DIR/bin/python3
#   --path      flux and python3 on the image's PATH
# The rest are the publisher's.
set -eu

fail() {
  echo "error: $*" >&2
  exit 1
}

flux=""
python=""
case "${1-}" in
--view)
  [ "$#" -ge 2 ] || fail "--view needs the view's directory"
  view=$2
  shift 2
  where="the Flux view ${view}"
  if [ -x "${view}/bin/flux" ]; then
    flux="${view}/bin/flux"
  fi
  for lib in "${view}"/lib/python3*; do
    if [ -d "${lib}" ] && [ -x "${view}/bin/${lib##*/}" ]; then
      python="${view}/bin/${lib##*/}"
      break
    fi
  done
  if [ -z "${python}" ] && [ -x "${view}/bin/python3" ]; then
    python="${view}/bin/python3"
  fi
  ;;
--path)
  shift
  where="PATH ${PATH}"
  flux=$(command -v flux || true)
  python=$(command -v python3 || true)
  ;;
*)
  fail "the first argument must be --view DIR or --path"
  ;;
esac

if [ -z "${flux}" ]; then
  fail "this image has no flux command in ${where}, so it cannot make the certificate; set the MiniCluster's annotation {{.KeygenImageOption}} to a minicluster-fn image to have that make it"
fi
if [ -z "${python}" ]; then
  fail "this image has no Python 3 in ${where} to create the certificate object with; set the MiniCluster's annotation {{.KeygenImageOption}} to a minicluster-fn image to have that create it"
fi
# -I: the image's environment (PYTHONPATH, user site) does not change what runs.
exec "${python}" -I - --flux "${flux}" "$@" <<'{{.Delimiter}}'
{{.Publisher}}
{{.Delimiter}}
