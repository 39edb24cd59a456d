#!/usr/bin/env bash
# Builds the two stand-in images that take long, cached per machine, and prints the directory that
# holds their archives (podman save) and images.txt, which lists "<archive> <image ref>" of each:
#   app.tar        localhost/minicluster-fn-test/app:bookworm         Debian 12 userland (stands in for
#                                                                     the examples' ubuntu:noble etc.)
#   flux-view.tar  localhost/minicluster-fn-test/flux-view:0.88.0     that userland plus flux-core 0.88.0,
#                                                                     flux-sched (Fluxion) 0.54.0 and a
#                                                                     Python in a spack-like view (stands
#                                                                     in for ghcr.io/converged-computing/flux-view-*)
#
#   tests/images/build-view.sh
#
# Cached under ${MINICLUSTER_FN_CACHE:-/var/cache/minicluster-fn}: the debootstrap root file system
# (keyed by suite, mirror and package list), flux-core and flux-sched (their own scripts), and the
# two archives (keyed by all of those and this script), so that a new checkout on the same machine
# builds nothing. One build at a time per machine: a second caller waits and then finds the result.
# build.sh lists these archives with the project image; tests/cluster/prebuild.sh builds them ahead.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache_root=${MINICLUSTER_FN_CACHE:-/var/cache/minicluster-fn}
# shellcheck source=tests/phases/record.sh
. "$repo/tests/phases/record.sh"

FLUX_VERSION=0.88.0
APP_REF=localhost/minicluster-fn-test/app:bookworm
VIEW_REF=localhost/minicluster-fn-test/flux-view:$FLUX_VERSION
SUITE=bookworm
MIRROR=${MINICLUSTER_FN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# What the generated scripts and flux need from the application image: bash and coreutils
# (minbase), Python 3 for flux's Python commands (its bindings use cffi; flux-modprobe.py,
# which rc1 runs, imports ply; flux's config helpers import yaml). time: /usr/bin/time, which the
# broker script of logging.timed runs (the corpus' tests/timed).
PACKAGES=python3,python3-cffi-backend,python3-yaml,python3-ply,time

for tool in podman debootstrap patchelf sha256sum tar flock python3; do
  command -v "$tool" >/dev/null || { echo "build-view: $tool not found (Debian: see .ci/run)" >&2; exit 1; }
done
if [ "$(id -u)" != 0 ]; then
  echo "build-view: debootstrap and podman import need root" >&2
  exit 1
fi

mkdir -p "$cache_root"
exec 9>"$cache_root/stand-in-view.lock"
phase_lock 9
scratch=$(mktemp -d "$cache_root/images-build.XXXXXX")
cleanup() {
  # debootstrap mounts /proc and /sys in the target; a failed run may leave them mounted.
  local m
  awk -v d="$scratch/" 'index($2, d) == 1 {print $2}' /proc/mounts | sort -r | while read -r m; do
    umount "$m" || umount -l "$m" || true
  done
  rm -rf "$scratch"
}
trap cleanup EXIT
# A build stopped from outside (make test stops its builds ahead when a step fails) cleans up too.
trap 'exit 143' TERM
trap 'exit 130' INT

elapsed() { echo $(( $(date +%s) - $1 )); }
key() { printf '%s\n' "$@" | sha256sum | cut -c1-16; }

# What the archives are made of: the key of their cache entry.
rootfs_key=$(key "$SUITE" minbase "$MIRROR" "$PACKAGES")
rootfs_tar=$cache_root/rootfs-$SUITE-$rootfs_key/rootfs.tar
flux_root=$("$here/build-flux-core.sh")
sched_root=$("$here/build-flux-sched.sh")
view_key=$(key "$rootfs_key" "$APP_REF" "$flux_root" "$sched_root" "$(sha256sum "$0" | cut -c1-64)" "$VIEW_REF")
dest=$cache_root/stand-in-view-$view_key
if [ -f "$dest/images.txt" ]; then
  echo "build-view: cached: $dest" >&2
  phase_cached "stand-in images: the flux view"
  echo "$dest"
  exit 0
fi
start=$(date +%s)
cpu=$(phase_cpu)

# The Debian root file system, cached as a tarball (numeric owners kept): the application image is
# that as one layer.
if [ ! -f "$rootfs_tar" ]; then
  rootfs_start=$(date +%s)
  rootfs_cpu=$(phase_cpu)
  echo "build-view: debootstrap $SUITE (minbase, $PACKAGES)" >&2
  if ! debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$scratch/rootfs" "$MIRROR" >"$scratch/debootstrap.log" 2>&1; then
    echo "build-view: debootstrap failed; last lines of its log:" >&2
    tail -n 30 "$scratch/debootstrap.log" >&2
    exit 1
  fi
  rm -rf "$scratch/rootfs/var/cache/apt/archives/"*.deb "$scratch/rootfs/var/lib/apt/lists/"*
  mkdir -p "$(dirname "$rootfs_tar")"
  tar --numeric-owner -C "$scratch/rootfs" -cf "$rootfs_tar.tmp" .
  mv "$rootfs_tar.tmp" "$rootfs_tar"
  rm -rf "$scratch/rootfs"
  echo "build-view: root file system built in $(elapsed "$rootfs_start") s: $rootfs_tar" >&2
  phase_record build "stand-in images: Debian root file system" "$(elapsed "$rootfs_start")" built "$(($(phase_cpu) - rootfs_cpu))"
fi

# The flux view image: the application image plus one layer with flux-core, flux-sched, a
# Python of the view's own and a view of them, laid out as flux-init.sh and the keygen script
# expect (generators/templates/init.sh, keygen.sh), as spack lays out the operator's views:
#   /opt/software/flux-core-<v>        both installs (DESTDIR=...) in flux-core's prefix, as the
#                                      operator's views have them: flux-core's rc1 loads Fluxion
#   /opt/software/flux-core-<v>-deps   the non-glibc libraries flux links, found through RUNPATH
#   /opt/software/python-<3.X>         the view's Python: the userland's interpreter and standard
#                                      library, copied (spack installs Python as a run dependency
#                                      of flux-core, and the view links it: bin/python3.X beside
#                                      lib/python3.X, which the keygen script runs)
#   /opt/software/python-<3.X>-deps    the non-glibc libraries it links (ssl's OpenSSL, ...)
#   /opt/views/._view/<hash>           symlinks to every file of both installs (a spack view)
#   /opt/view -> /opt/views/._view/<hash>
# The init container copies the view (symlinks) and /opt/software to the shared volume; the broker
# container copies the software to its own /opt/software, so the links resolve there. Flux itself
# runs the userland's /usr/bin/python3 (build-flux-core.sh), not the view's.
prefix=/opt/software/flux-core-$FLUX_VERSION
deps=$prefix-deps
python=$(tar -tf "$rootfs_tar" | sed -n 's|^\./usr/bin/\(python3\.[0-9][0-9]*\)$|\1|p')
if [ "$(printf '%s\n' "$python" | wc -w)" != 1 ]; then
  echo "build-view: want one /usr/bin/python3.X in the root file system, found: ${python:-none}" >&2
  exit 1
fi
python_prefix=/opt/software/python-${python#python}
python_deps=$python_prefix-deps
view_hash=$(key "$flux_root" "$sched_root" | cut -c1-16)$(key "$prefix" "$python_prefix" | cut -c1-16)
layer=$scratch/view
mkdir -p "$layer/opt/software" "$layer/opt/views/._view"
cp -a "$flux_root$prefix" "$layer$prefix"
cp -a "$sched_root$prefix/." "$layer$prefix/"
# The Python, from the userland the image is made of: bin/python3.X and python3 -> python3.X,
# lib/python3.X (the standard library with lib-dynload, byte-compiled as Debian installed it).
mkdir -p "$scratch/python"
tar -C "$scratch/python" -xf "$rootfs_tar" "./usr/bin/$python" "./usr/lib/$python"
mkdir -p "$layer$python_prefix/bin" "$layer$python_prefix/lib"
cp -a "$scratch/python/usr/bin/$python" "$layer$python_prefix/bin/"
ln -s "$python" "$layer$python_prefix/bin/python3"
cp -a "$scratch/python/usr/lib/$python" "$layer$python_prefix/lib/"
rm -rf "$scratch/python"

# bundle PREFIX DEPS: copy what the ELF files under PREFIX link outside glibc into DEPS/lib
# (whatever the application image has, the view must not depend on it), and point every ELF
# file's RUNPATH at PREFIX/lib and DEPS/lib, so dependencies of dependencies resolve too. The
# ELF files are added to the array elves.
# The magic read by bash itself: head, od and tr per file took 45 CPU-s over 1,745 files.
is_elf() { local magic=; IFS= read -r -n 4 -d '' magic < "$1" || true; [ "$magic" = $'\177ELF' ]; }
glibc='^(ld-linux-x86-64\.so\.2|libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|libresolv\.so\.2|libutil\.so\.1|libanl\.so\.1|linux-vdso\.so\.1)$'
elves=()
bundle() {
  local tree=$1 tree_deps=$2 f rpath
  local -a tree_elves
  mkdir -p "$layer$tree_deps/lib"
  mapfile -t tree_elves < <(find "$layer$tree" -type f | while read -r f; do if is_elf "$f"; then echo "$f"; fi; done)
  for f in "${tree_elves[@]}"; do
    LD_LIBRARY_PATH="$layer$tree/lib" ldd "$f" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
  done | sort -u | while read -r soname path; do
    if [[ "$soname" =~ $glibc ]] || [[ "$path" == "$layer"* ]]; then
      continue
    fi
    cp -L "$path" "$layer$tree_deps/lib/$soname"
  done
  for f in "${tree_elves[@]}"; do
    # Only dynamic ELF files have a RUNPATH to set (patchelf cannot read one from others).
    if rpath=$(patchelf --print-rpath "$f" 2>/dev/null); then
      chmod u+w "$f"
      patchelf --set-rpath "${rpath:+$rpath:}$tree/lib:$tree_deps/lib" "$f"
    fi
  done
  for f in "$layer$tree_deps/lib/"*; do
    [ -e "$f" ] || continue
    chmod u+w "$f"
    patchelf --set-rpath "$tree_deps/lib" "$f"
  done
  elves+=("${tree_elves[@]}")
}
bundle "$prefix" "$deps"
bundle "$python_prefix" "$python_deps"

# The spack-like view: real directories, a symlink per file (or symlink) of both installs; a file
# both have stops the build (the second link exists). One process: a mkdir and an ln per file took
# 28 CPU-s.
viewdir=$layer/opt/views/._view/$view_hash
python3 - "$layer" "$viewdir" "$prefix" "$python_prefix" <<'PY'
import os, sys
layer, viewdir = sys.argv[1], sys.argv[2]
for tree in sys.argv[3:]:
    top = layer + tree
    for root, dirs, files in os.walk(top):
        rel = os.path.relpath(root, top)
        # A symlink to a directory is linked like a file, not descended into.
        links = [d for d in dirs if os.path.islink(os.path.join(root, d))]
        dirs[:] = [d for d in dirs if d not in links]
        entries = files + links
        if entries:
            os.makedirs(os.path.normpath(os.path.join(viewdir, rel)), exist_ok=True)
        for name in entries:
            path = os.path.normpath(os.path.join(rel, name))
            os.symlink(os.path.join(tree, path), os.path.join(viewdir, path))
PY
ln -s "/opt/views/._view/$view_hash" "$layer/opt/view"

# Check inside the image's file system (chroot): every library an ELF file of the view needs
# resolves, and outside glibc only to /opt/software; and, with the userland's own Python
# removed, the view runs what the keygen pod runs: flux keygen, and its Python with the modules
# the publisher imports, from its own prefix.
check=$scratch/check
mkdir -p "$check"
tar -C "$check" -xf "$rootfs_tar"
cp -a "$layer/opt/." "$check/opt/"
bad=$(for f in "${elves[@]}"; do
  f=${f#"$layer"}
  chroot "$check" /usr/bin/ldd "$f" 2>/dev/null | while read -r soname arrow path _; do
    if [[ "$soname $arrow $path" == *"not found"* ]]; then
      echo "$f: $soname not found"
    elif [[ "$arrow" == "=>" && "$path" == /* && "$path" != /opt/software/* && ! "$soname" =~ $glibc ]]; then
      echo "$f: $soname from $path"
    fi
  done
done | sort -u)
rm -rf "$check/usr/bin/${python:?}" "$check/usr/bin/python3" "$check/usr/lib/${python:?}"
mount -t proc proc "$check/proc"
keygen_check=0
chroot "$check" /opt/view/bin/flux keygen --name stand-in /tmp/stand-in.cert >"$scratch/keygen-check.log" 2>&1 &&
  grep -q '^    secret-key = "' "$check/tmp/stand-in.cert" &&
  chroot "$check" "/opt/view/bin/$python" -I -c "
import sys, argparse, base64, json, random, re, socket, ssl, subprocess, time, urllib.error, urllib.parse, urllib.request
ssl.create_default_context()
assert sys.prefix == '$python_prefix', sys.prefix
" >>"$scratch/keygen-check.log" 2>&1 || keygen_check=$?
umount "$check/proc"
rm -rf "$check"
if [ -n "$bad" ]; then
  echo "build-view: libraries of the flux view that do not resolve inside /opt/software:" >&2
  echo "$bad" >&2
  exit 1
fi
if [ "$keygen_check" != 0 ]; then
  echo "build-view: the view cannot run the keygen (flux keygen, or its Python from $python_prefix):" >&2
  cat "$scratch/keygen-check.log" >&2
  exit 1
fi

tar --numeric-owner --owner=0 --group=0 -C "$layer" -cf "$scratch/view-layer.tar" opt
# The application image is the root file system as one layer; the view is one layer more.
podman rmi -f "$VIEW_REF" "$APP_REF" >/dev/null 2>&1 || true
podman import -q "$rootfs_tar" "$APP_REF" >/dev/null
printf 'FROM %s\nADD view-layer.tar /\n' "$APP_REF" > "$scratch/Containerfile"
podman build -q --network=none -f "$scratch/Containerfile" -t "$VIEW_REF" "$scratch" >/dev/null
mkdir -p "$scratch/out"
podman save -q -o "$scratch/out/app.tar" "$APP_REF" >/dev/null
podman save -q -o "$scratch/out/flux-view.tar" "$VIEW_REF" >/dev/null
printf '%s %s\n' "$dest/app.tar" "$APP_REF" "$dest/flux-view.tar" "$VIEW_REF" > "$scratch/out/images.txt"
# Publish atomically: a half-written archive is never taken for a cache hit.
rm -rf "$dest" && mv "$scratch/out" "$dest"
echo "build-view: $VIEW_REF in $(elapsed "$start") s ($(du -sh "$layer/opt" | cut -f1) added to the userland): $dest" >&2
phase_record build "stand-in images: the flux view" "$(elapsed "$start")" built "$(($(phase_cpu) - cpu))"
echo "$dest"
