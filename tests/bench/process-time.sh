#!/usr/bin/env bash
# process-time.sh BINARY — whole-process figures of minicluster-fn, each against a floor measured
# in the same run: tests/bench/passthroughfn, the most trivial kyaml fn/framework function (it
# changes nothing).
#
# Budget (a missed budget is printed, never fails the script: machines are noisy):
# - hello-world ResourceList: CPU at most 2x the floor's on the same input, in paired runs.
# - 10 / 100 / 1,000 MiniClusters in one ResourceList: CPU grows linearly (the cost per
#   MiniCluster from 100 to 1,000 at most 1.5x that from 10 to 100).
# - 1,000 MiniClusters: CPU and peak RSS at most 0.6x what the floor needs to pass the same
#   rendered output (8,000 objects) through, in paired runs.
# - kustomize build running the generator, against a build of the pre-rendered output and against
#   the same build with the floor as the generator: ratios only.
#
# Every command is started directly, without a shell, as kustomize and kpt start an exec function
# (tests/bench/proctime, which also reads CPU time and peak RSS from the kernel).
# Environment: KUSTOMIZE (default <repo>/bin/kustomize), RUNS (default 200), GO (default go).
set -euo pipefail

if [[ $# -ne 1 || ! -x "$1" ]]; then
  echo "usage: $0 BINARY   (BINARY: an executable minicluster-fn, e.g. bin/minicluster-fn)" >&2
  exit 2
fi
bin="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
kustomize="${KUSTOMIZE:-${root}/bin/kustomize}"
runs="${RUNS:-200}"
(( runs >= 50 )) || { echo "RUNS must be at least 50" >&2; exit 2; }
go="${GO:-go}"

tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT

# --- inputs -----------------------------------------------------------------------------------
# shellcheck source=tools/toolchain.sh
. "${root}/tools/toolchain.sh"
(cd "${root}" && GOFLAGS=-buildvcs=false "${go}" build -o "${tmp}/" \
  ./tests/bench/genrl ./tests/bench/proctime ./tests/bench/passthroughfn)
floor="${tmp}/passthroughfn"
"${tmp}/genrl" -wrap "${root}/examples/hello-world/minicluster.yaml" > "${tmp}/hello.yaml"
for n in 10 100 1000; do
  "${tmp}/genrl" -n "${n}" > "${tmp}/rl-${n}.yaml"
done
# Every input must render before it is timed.
for f in "${tmp}"/hello.yaml "${tmp}"/rl-*.yaml; do
  # shellcheck disable=SC2094 # it reads f and writes out-<f's name>: two different files
  if ! "${bin}" < "${f}" > "${tmp}/out-$(basename "${f}")" 2> "${tmp}/err.txt"; then
    echo "error: ${bin} failed on $(basename "${f}"):" >&2
    cat "${tmp}/err.txt" >&2
    exit 1
  fi
done
# The floor's input for the 1,000 case: the rendered output, a ResourceList of 8,000 objects.
rendered="${tmp}/out-rl-1000.yaml"
objects=$(grep -c '^  kind: ' "${rendered}" || true)

# --- helpers -------------------------------------------------------------------------------------
# field NAME LINE: the value after NAME in a line of proctime.
field() { awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }' <<< "$2"; }
# verdict VALUE LIMIT: "ok" if VALUE <= LIMIT, else "MISSED".
verdict() { awk -v v="$1" -v l="$2" 'BEGIN { print (v <= l) ? "ok" : "MISSED" }'; }
div() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# --- measurements --------------------------------------------------------------------------------
hello=$("${tmp}/proctime" -runs "${runs}" -warmup 10 -input "${tmp}/hello.yaml" \
  -base "${floor}" -base-input "${tmp}/hello.yaml" -- "${bin}")
declare -A many
for n in 10 100 1000; do
  r=40
  (( n == 1000 )) && r=10
  many[${n}]=$("${tmp}/proctime" -runs "${r}" -warmup 2 -input "${tmp}/rl-${n}.yaml" -- "${bin}")
done
big=$("${tmp}/proctime" -runs 10 -warmup 1 -input "${tmp}/rl-1000.yaml" \
  -base "${floor}" -base-input "${rendered}" -- "${bin}")

if [[ -x "${kustomize}" ]]; then
  # The example with its exec path pointing at BINARY; the same with the floor as the generator;
  # and a directory of the rendered output.
  mkdir -p "${tmp}/gen" "${tmp}/floor" "${tmp}/static"
  for d in gen floor; do
    exe="${bin}"
    [[ "${d}" == floor ]] && exe="${floor}"
    cp "${root}/examples/hello-world/kustomization.yaml" "${tmp}/${d}/"
    sed -e "s#^\( *path: \).*minicluster-fn *\$#\1${exe}#" "${root}/examples/hello-world/minicluster.yaml" > "${tmp}/${d}/minicluster.yaml"
  done
  "${kustomize}" build --enable-alpha-plugins --enable-exec "${tmp}/gen" > "${tmp}/static/rendered.yaml"
  printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - rendered.yaml\n' > "${tmp}/static/kustomization.yaml"
  "${kustomize}" build "${tmp}/static" > "${tmp}/static.out"
  if ! cmp -s "${tmp}/static/rendered.yaml" "${tmp}/static.out"; then
    echo "warning: kustomize build of the rendered output differs from it" >&2
  fi
  kgen=$("${tmp}/proctime" -runs 100 -warmup 5 -base "${kustomize} build ${tmp}/static" \
    -- "${kustomize}" build --enable-alpha-plugins --enable-exec "${tmp}/gen")
  kfloor=$("${tmp}/proctime" -runs 100 -warmup 5 -base "${kustomize} build --enable-alpha-plugins --enable-exec ${tmp}/floor" \
    -- "${kustomize}" build --enable-alpha-plugins --enable-exec "${tmp}/gen")
fi

# --- report --------------------------------------------------------------------------------------
row() { printf '%-62s %12s %12s   %-10s %s\n' "$@"; }
echo "minicluster-fn process figures: ${bin}"
echo "machine: $(nproc) CPU, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo 2> /dev/null || uname -m)"
echo "version: $("${bin}" version 2> /dev/null | head -1 || echo unknown)"
echo "floor: tests/bench/passthroughfn (kyaml fn/framework, changes nothing); timer: tests/bench/proctime"
echo "cpu = user+system time, median; ratios of CPU are medians of paired runs"
echo
row "measurement" "function" "floor" "ratio" "budget / verdict"
row "-----------" "--------" "-----" "-----" "----------------"
row "hello-world ResourceList, CPU (${runs} pairs)" "$(field cpu "${hello}") ms" "$(field base_cpu "${hello}") ms" \
  "$(field cpu_ratio "${hello}")x" "<= 2x: $(verdict "$(field cpu_ratio "${hello}")" 2)"
row "  wall, median" "$(field median "${hello}") ms" "$(field base_median "${hello}") ms" "$(div "$(field median "${hello}")" "$(field base_median "${hello}")")x" "-"
for n in 10 100 1000; do
  row "${n} MiniClusters in one ResourceList, CPU / wall" "$(field cpu "${many[${n}]}") ms" "-" "-" "wall $(field median "${many[${n}]}") ms"
done
c10=$(field cpu "${many[10]}") c100=$(field cpu "${many[100]}") c1000=$(field cpu "${many[1000]}")
m_low=$(awk -v a="${c10}" -v b="${c100}" 'BEGIN { printf "%.3f", (b - a) / 90 }')
m_high=$(awk -v a="${c100}" -v b="${c1000}" 'BEGIN { printf "%.3f", (b - a) / 900 }')
lin=$(div "${m_high}" "${m_low}")
row "  CPU per MiniCluster, 10->100 and 100->1,000" "${m_low} ms" "${m_high} ms" "${lin}x" "<= 1.5x (linear): $(verdict "${lin}" 1.5)"
row "1,000 MiniClusters vs floor passing ${objects} objects: CPU" "$(field cpu "${big}") ms" "$(field base_cpu "${big}") ms" \
  "$(field cpu_ratio "${big}")x" "<= 0.6x: $(verdict "$(field cpu_ratio "${big}")" 0.6)"
row "  peak RSS" "$(field rss "${big}") MiB" "$(field base_rss "${big}") MiB" \
  "$(field rss_ratio "${big}")x" "<= 0.6x: $(verdict "$(field rss_ratio "${big}")" 0.6)"
row "  wall, median" "$(field median "${big}") ms" "$(field base_median "${big}") ms" "$(div "$(field median "${big}")" "$(field base_median "${big}")")x" "-"
if [[ -n "${kgen:-}" ]]; then
  row "kustomize build, generator vs pre-rendered: wall" "$(field median "${kgen}") ms" "$(field base_median "${kgen}") ms" \
    "$(div "$(field median "${kgen}")" "$(field base_median "${kgen}")")x" "(no target)"
  row "  CPU" "$(field cpu "${kgen}") ms" "$(field base_cpu "${kgen}") ms" "$(field cpu_ratio "${kgen}")x" "(no target)"
  row "kustomize build, generator vs floor as generator: wall" "$(field median "${kfloor}") ms" "$(field base_median "${kfloor}") ms" \
    "$(div "$(field median "${kfloor}")" "$(field base_median "${kfloor}")")x" "(no target)"
  row "  CPU" "$(field cpu "${kfloor}") ms" "$(field base_cpu "${kfloor}") ms" "$(field cpu_ratio "${kfloor}")x" "(no target)"
else
  echo "kustomize not found at ${kustomize}: run make bin/kustomize"
fi
