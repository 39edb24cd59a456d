#!/usr/bin/env bash
# Builds flux-sched (Fluxion) from the vendored source (../shared/vendor, never committed) against
# the flux-core that build-flux-core.sh builds, and installs it with DESTDIR into a cache directory
# keyed by the tarball's and this script's sha256 and by that flux-core build, outside the checkout.
# A later run with the same inputs reuses the cache. Prints the install root (DESTDIR) on stdout;
# it holds only flux-sched's files, under flux-core's prefix <root>/opt/software/flux-core-<version>,
# as the operator's flux views have both in one prefix (flux-core's rc1 then finds Fluxion's
# modprobe files and loads it instead of sched-simple).
#
# Needs flux-sched's build dependencies from Debian 12 (tools/deps.sh), with Debian's /usr/bin/python3.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
FLUX_VERSION=${FLUX_VERSION:-0.88.0}
FLUX_SCHED_VERSION=${FLUX_SCHED_VERSION:-0.54.0}
tarball=${FLUX_SCHED_TARBALL:-$here/../../../shared/vendor/flux-sched-$FLUX_SCHED_VERSION.tar.gz}
cache_root=${MINICLUSTER_FN_CACHE:-/var/cache/minicluster-fn}
# shellcheck source=tests/phases/record.sh
. "$here/../../tests/phases/record.sh"
prefix=/opt/software/flux-core-$FLUX_VERSION

if [ ! -f "$tarball" ]; then
  echo "build-flux-sched: $tarball not found (the vendored flux-sched source lives in ../shared/vendor)" >&2
  exit 1
fi
flux_root=$(FLUX_VERSION=$FLUX_VERSION "$here/build-flux-core.sh")
# flux_root's name is the hash of flux-core's tarball and script: a new flux-core build is a new key.
sum=$( (cat "$tarball" "$0"; echo "$flux_root") | sha256sum | cut -c1-16)
dest=$cache_root/flux-sched-$sum
# One build at a time per cache: a second caller waits for the first and then finds its result.
exec 9>"$cache_root/flux-sched-$sum.lock"
phase_lock 9
if [ -f "$dest/root$prefix/lib/flux/modules/sched-fluxion-qmanager.so" ]; then
  echo "build-flux-sched: cached: $dest/root" >&2
  phase_cached "flux-sched (Fluxion)"
  echo "$dest/root"
  exit 0
fi

for tool in cmake make pkg-config gcc g++ patchelf; do
  command -v "$tool" >/dev/null || { echo "build-flux-sched: $tool not found: install flux-sched's build dependencies (tools/deps.sh)" >&2; exit 1; }
done

work=$(mktemp -d "$cache_root/flux-sched-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
# A build stopped from outside (make test stops its builds ahead when a step fails) cleans up too.
trap 'exit 143' TERM
trap 'exit 130' INT
start=$(date +%s)
cpu=$(phase_cpu)
tar -C "$work" -xzf "$tarball"
src=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -n1)
# flux-core's pkg-config files name its prefix, /opt/software/..., which exists only in the images:
# copies that point at the cached install instead, for compiling and linking.
mkdir -p "$work/pkgconfig"
for pc in "$flux_root$prefix"/lib/pkgconfig/*.pc; do
  sed "s|^prefix=.*|prefix=$flux_root$prefix|" "$pc" > "$work/pkgconfig/${pc##*/}"
done
(
  cd "$src"
  # Only what is installed is built: the modules and their libraries. All targets would add
  # flux-sched's unit tests, the Catch2 library they link and resource-query, which nothing installs;
  # cmake --install fails if a target it installs was not built, so this list cannot fall short.
  # RelWithDebInfo, as upstream's rpm preset (CMakePresets.json) builds it, but -O2 without -g, as
  # flux-core here.
  FLUX_SCHED_VERSION=$FLUX_SCHED_VERSION PYTHON=/usr/bin/python3 PKG_CONFIG_PATH="$work/pkgconfig" \
    cmake -S . -B build -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG"
  cmake --build build -j"${FLUX_BUILD_JOBS:-2}" --target sched-fluxion-resource-module \
    sched-fluxion-resource sched-fluxion-feasibility sched-fluxion-qmanager reapi_cli fluxion-data
  DESTDIR="$work/root" cmake --install build
  root=$work/root$prefix
  # CMake adds the directories linked from to RUNPATH: the cached flux-core's, a path of this
  # machine. Only the prefix's are kept; build.sh adds the bundled libraries'.
  find "$root" -name '*.so*' -type f | while read -r f; do
    rpath=$(patchelf --print-rpath "$f")
    patchelf --set-rpath "${rpath//:$flux_root$prefix\/lib/}" "$f"
  done
  # Debian's python3 names local/lib/python3.X/dist-packages as a prefix's package directory (its
  # posix_local scheme); flux-core's, spack's and the PYTHONPATH of the generated scripts are
  # lib/python3.X/site-packages. Fluxion's package goes there, and flux's link to it follows.
  py=$(cd "$root/local/lib" && echo python3.*)
  mkdir -p "$root/lib/$py/site-packages"
  mv "$root/local/lib/$py/dist-packages/fluxion" "$root/lib/$py/site-packages/"
  rm -r "$root/local"
  ln -sfn "$prefix/lib/$py/site-packages/fluxion" "$root/lib/flux/$py/fluxion"
) >"$work/build.log" 2>&1 || {
  echo "build-flux-sched: build failed; last lines of the log:" >&2
  tail -n 40 "$work/build.log" >&2
  exit 1
}
# Publish atomically: a half-built tree is never taken for a cache hit.
rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
mv "$work/root" "$dest.tmp/root"
mv "$work/build.log" "$dest.tmp/build.log"
rm -rf "$dest" && mv "$dest.tmp" "$dest"
echo "build-flux-sched: built flux-sched $FLUX_SCHED_VERSION in $(( $(date +%s) - start )) s: $dest/root" >&2
phase_record build "flux-sched (Fluxion)" "$SECONDS" built "$(($(phase_cpu) - cpu))"
echo "$dest/root"
