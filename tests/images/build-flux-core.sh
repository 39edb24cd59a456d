#!/usr/bin/env bash
# Builds flux-core from the vendored source (../shared/vendor, never committed) and installs it
# with DESTDIR into a cache directory keyed by the tarball's and this script's sha256, outside the
# checkout. A later run with the same tarball and script reuses the cache. Prints the install root
# (DESTDIR) on stdout; the flux-core tree inside it is <root>/opt/software/flux-core-<version>.
#
# Needs flux-core's build dependencies from Debian 12 (listed in .ci/run, from
# ../shared/vendor/README.md), with Debian's /usr/bin/python3. Lua 5.3 is required: Debian 12's lua-posix has no Lua 5.4 module.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
FLUX_VERSION=${FLUX_VERSION:-0.88.0}
tarball=${FLUX_CORE_TARBALL:-$here/../../../shared/vendor/flux-core-$FLUX_VERSION.tar.gz}
cache_root=${MINICLUSTER_FN_CACHE:-/var/cache/minicluster-fn}
prefix=/opt/software/flux-core-$FLUX_VERSION
# shellcheck source=tests/phases/record.sh
. "$here/../../tests/phases/record.sh"

if [ ! -f "$tarball" ]; then
  echo "build-flux-core: $tarball not found (the vendored flux-core source lives in ../shared/vendor)" >&2
  exit 1
fi
sum=$(cat "$tarball" "$0" | sha256sum | cut -c1-16)
dest=$cache_root/flux-core-$sum
mkdir -p "$cache_root"
# One build at a time per cache: a second caller waits for the first and then finds its result.
exec 9>"$cache_root/flux-core-$sum.lock"
phase_lock 9
if [ -x "$dest/root$prefix/bin/flux" ]; then
  echo "build-flux-core: cached: $dest/root" >&2
  phase_cached flux-core
  echo "$dest/root"
  exit 0
fi

for tool in autoconf automake libtoolize make pkg-config gcc g++ lua5.3 dash; do
  command -v "$tool" >/dev/null || { echo "build-flux-core: $tool not found: install flux-core's build dependencies (.ci/run)" >&2; exit 1; }
done

work=$(mktemp -d "$cache_root/flux-core-build.XXXXXX")
trap 'rm -rf "$work"' EXIT
# A build stopped from outside (make test stops its builds ahead when a step fails) cleans up too.
trap 'exit 143' TERM
trap 'exit 130' INT
start=$(date +%s)
cpu=$(phase_cpu)
tar -C "$work" -xzf "$tarball"
src=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -n1)
# The vendored export lacks this test-data file; only flux-core's own test suite reads it.
mkdir -p "$src/t/resource" && touch "$src/t/resource/resource.eventlog.thing1"
(
  cd "$src"
  FLUX_VERSION=$FLUX_VERSION ./autogen.sh
  # Debian's Python, which has the cffi/yaml/ply modules and which the images run (a python3
  # earlier on PATH, e.g. pyenv's, would be recorded as flux's interpreter).
  # -O2 without autoconf's default -g: debug information made two thirds of the install (75 MB with
  # it, 24 MB without), which every broker pod's init container copies. The build time did not
  # change measurably (551 s with, 552 s without, on 2 cores).
  # --disable-static: libtool would compile every library object a second time for static
  # libraries that nothing here links (make took 556 CPU-s with them, 444 without; 19 MB installed).
  # configure, and the libtool script it writes, run by dash (CONFIG_SHELL): libtool runs once per
  # object compiled, linked and installed, and under bash it took a third of the build's CPU (make
  # -j2 415 CPU-s under bash, 271 under dash; configure 58 and 50, install 59 and 42). dash is
  # Debian's /bin/sh, always installed.
  CONFIG_SHELL=/bin/dash /bin/dash ./configure --prefix="$prefix" --disable-static LUA=/usr/bin/lua5.3 \
    PYTHON=/usr/bin/python3 CFLAGS=-O2 CXXFLAGS=-O2 CONFIG_SHELL=/bin/dash
  head -n1 libtool | grep -qx '#! */bin/dash' || { echo "build-flux-core: libtool is not run by /bin/dash: $(head -n1 libtool)"; exit 1; }
  make -j"${FLUX_BUILD_JOBS:-2}"
  make install DESTDIR="$work/root"
) >"$work/build.log" 2>&1 || {
  echo "build-flux-core: build failed; last lines of the log:" >&2
  tail -n 40 "$work/build.log" >&2
  exit 1
}
cp "$work/build.log" "$work/root.build.log"
# Publish atomically: a half-built tree is never taken for a cache hit.
rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
mv "$work/root" "$dest.tmp/root"
mv "$work/root.build.log" "$dest.tmp/build.log"
rm -rf "$dest" && mv "$dest.tmp" "$dest"
echo "build-flux-core: built flux-core $FLUX_VERSION in $(( $(date +%s) - start )) s: $dest/root" >&2
phase_record build flux-core "$SECONDS" built "$(($(phase_cpu) - cpu))"
echo "$dest/root"
