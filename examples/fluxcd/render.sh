#!/usr/bin/env bash
# render.sh: the CI step that lets Flux CD run MiniClusters.
#
# Flux CD's kustomize-controller runs no KRM functions, so it cannot render a MiniCluster itself.
# This script renders the MiniClusters of a repository into a plain directory that a Flux CD
# Kustomization applies, and can write that Kustomization and its source, and push the directory
# as an OCI artifact.
#
# Usage:
#   render.sh [-f FLUXCD_FILE] [-p OCI_URL] OUT_DIR SOURCE... [-- FLUXCD_FLAGS...]
#
#   OUT_DIR     the directory Flux CD applies. The script owns its *.yaml files: each run replaces
#               them, so a MiniCluster deleted from the repository disappears from OUT_DIR and
#               Flux CD prunes its objects.
#   SOURCE      MiniCluster files, or directories searched for *.yaml/*.yml files that hold one.
#               minicluster-fn decides which files hold a MiniCluster by parsing them (any YAML
#               spelling of the kind). Under a directory, every *.yaml/*.yml file must parse, and a
#               file that holds a MiniCluster must hold nothing else; otherwise the script fails
#               naming the file, and OUT_DIR is left as it was.
#   -f FILE     also write the Flux CD objects for OUT_DIR to FILE (outside OUT_DIR), with
#               `minicluster-fn fluxcd OUT_DIR FLUXCD_FLAGS...`. Their health checks name the
#               hashed Job names of this render, so commit FILE together with OUT_DIR and let
#               Flux CD apply both from the same revision.
#   -p OCI_URL  push OUT_DIR as an OCI artifact (oci://registry/repository) tagged with the short
#               commit and "latest", with the flux CLI (needs `flux` and a registry login).
#
# Environment: MINICLUSTER_FN, the minicluster-fn binary (default: minicluster-fn on PATH).
#
# Example (GitHub Actions or any CI), run in your GitOps repository (the one that holds your
# MiniClusters and that Flux CD reads), from its top directory, committing the result; copy this
# script into that repository or call it by its path in a checkout of minicluster-fn:
#   examples/fluxcd/render.sh -f clusters/prod/miniclusters.yaml deploy/miniclusters hpc/ \
#     -- --url https://github.com/org/hpc --branch main --target-namespace hpc
#   git add deploy/miniclusters clusters/prod/miniclusters.yaml && git commit -m "Render MiniClusters"
#
# Nothing is changed unless every MiniCluster is valid: they are validated and rendered into a
# temporary directory first, and minicluster-fn prints every problem with its file and field.
set -euo pipefail

fn=${MINICLUSTER_FN:-minicluster-fn}
if ! command -v "${fn}" >/dev/null; then
  echo "render.sh: the minicluster-fn binary ${fn} is not found: put minicluster-fn on PATH (make build," \
    "then copy bin/minicluster-fn) or name it with MINICLUSTER_FN=/path/to/minicluster-fn" >&2
  exit 2
fi
fluxcd_file=
oci_url=

usage() {
  echo "usage: render.sh [-f FLUXCD_FILE] [-p OCI_URL] OUT_DIR SOURCE... [-- FLUXCD_FLAGS...]" >&2
  exit 2
}

while getopts 'f:p:h' opt; do
  case "${opt}" in
    f) fluxcd_file=${OPTARG} ;;
    p) oci_url=${OPTARG} ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
[[ $# -ge 2 ]] || usage
out=$1
shift

# The sources end at "--"; what follows is for minicluster-fn fluxcd.
sources=()
while [[ $# -gt 0 && $1 != "--" ]]; do
  sources+=("$1")
  shift
done
[[ $# -gt 0 ]] && shift
fluxcd_flags=("$@")
if [[ -n ${fluxcd_file} && ${#fluxcd_flags[@]} -eq 0 ]]; then
  echo "render.sh: -f needs the flags of minicluster-fn fluxcd after --, e.g. -- --url URL --target-namespace NS" >&2
  exit 2
fi
if [[ -n ${fluxcd_file} && $(dirname "${fluxcd_file}") -ef ${out} ]]; then
  echo "render.sh: -f ${fluxcd_file}: write the Flux CD objects outside ${out}, which Flux CD applies" >&2
  exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf "${tmp}"' EXIT

# minicluster-fn validates every MiniCluster of the sources in one run (so it also refuses two
# MiniClusters that would generate the same object) and prints "ok: FILE: MiniCluster/NAME" for
# each. It, not a text pattern, decides which files under a directory hold MiniClusters: a file
# skipped by mistake would vanish from OUT_DIR, and Flux CD would prune its running cluster.
"${fn}" validate "${sources[@]}" > "${tmp}/validated"
files=()
while IFS= read -r f; do
  files+=("${f}")
done < <(sed -n 's|^ok: \(.*\): MiniCluster/[^/]*$|\1|p' "${tmp}/validated" | awk '!seen[$0]++')
if [[ ${#files[@]} -eq 0 ]]; then
  echo "render.sh: no MiniCluster found in: ${sources[*]}" >&2
  exit 1
fi

# Each file is rendered into <names of its MiniClusters>.yaml, so file names say what is inside
# and stay stable.
for f in "${files[@]}"; do
  names=$(awk -v prefix="ok: ${f}: MiniCluster/" 'index($0, prefix) == 1 { print substr($0, length(prefix) + 1) }' "${tmp}/validated" | paste -sd_ -)
  target="${tmp}/${names}.yaml"
  if [[ -e ${target} ]]; then
    echo "render.sh: ${f}: MiniCluster ${names} is also defined in another file; each name must be unique" >&2
    exit 1
  fi
  "${fn}" render "${f}" > "${target}"
done

# A kustomization.yaml listing the rendered files, so that what Flux CD applies is explicit.
# (Written under another name first: the glob below must not list it.)
{
  echo "# Generated by render.sh from: ${sources[*]}. Do not edit; run render.sh again."
  echo "apiVersion: kustomize.config.k8s.io/v1beta1"
  echo "kind: Kustomization"
  echo "resources:"
  for f in "${tmp}"/*.yaml; do
    echo "- $(basename "${f}")"
  done
} > "${tmp}/kustomization.yaml.new"
mv "${tmp}/kustomization.yaml.new" "${tmp}/kustomization.yaml"

mkdir -p "${out}"
rm -f "${out}"/*.yaml "${out}"/*.yml
cp "${tmp}"/*.yaml "${out}/"

if [[ -n ${fluxcd_file} ]]; then
  "${fn}" fluxcd "${out}" "${fluxcd_flags[@]}" > "${tmp}/fluxcd.yaml"
  mkdir -p "$(dirname "${fluxcd_file}")"
  mv "${tmp}/fluxcd.yaml" "${fluxcd_file}"
fi

if [[ -n ${oci_url} ]]; then
  # As in the Flux CD OCI cheat sheet: the artifact records where it came from; an
  # OCIRepository with ref.tag "latest" follows the newest push.
  revision="$(git branch --show-current)@sha1:$(git rev-parse HEAD)"
  flux push artifact "${oci_url}:$(git rev-parse --short HEAD)" --path="${out}" \
    --source="$(git config --get remote.origin.url)" --revision="${revision}"
  flux tag artifact "${oci_url}:$(git rev-parse --short HEAD)" --tag latest
fi
