#!/usr/bin/env bash
# Builds the local stand-in images the live tests run, without a registry and without RUN steps
# (podman cannot run containers on these VMs: no CAP_SYS_RESOURCE), and saves each with
# `podman save` to OUTDIR, for `ctr -n k8s.io images import OUTDIR/<archive>`.
#
#   tests/images/build.sh [OUTDIR]     (default: $MINICLUSTER_FN_TEST_IMAGES, else bin/test-images)
#
# The images (see README.md here):
#   app.tar        localhost/minicluster-fn-test/app:bookworm         Debian 12 userland (stands in for
#                                                                     the examples' ubuntu:noble etc.)
#   flux-view.tar  localhost/minicluster-fn-test/flux-view:0.88.0     that userland plus flux-core 0.88.0
#                                                                     and flux-sched (Fluxion) 0.54.0 in a
#                                                                     spack-like view (stands in for
#                                                                     ghcr.io/converged-computing/flux-view-*)
#   project.tar    the keygen image the built binary names (make image)
# OUTDIR/images.txt lists "<archive> <image ref>", one image a line.
#
# Slow parts are cached under ${MINICLUSTER_FN_CACHE:-/var/cache/minicluster-fn}: flux-core (keyed by
# the vendored tarball, build-flux-core.sh), flux-sched (keyed by its tarball and that flux-core
# build, build-flux-sched.sh) and the debootstrap root file system (keyed by suite, mirror and
# package list). An archive in OUTDIR is rebuilt only when what made it changed.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache_root=${MINICLUSTER_FN_CACHE:-/var/cache/minicluster-fn}
out=${1:-${MINICLUSTER_FN_TEST_IMAGES:-$repo/bin/test-images}}

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

for tool in podman debootstrap patchelf sha256sum tar; do
  command -v "$tool" >/dev/null || { echo "build.sh: $tool not found (Debian: see .ci/run)" >&2; exit 1; }
done
if [ "$(id -u)" != 0 ]; then
  echo "build.sh: debootstrap and podman import need root" >&2
  exit 1
fi

mkdir -p "$out" "$cache_root"
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

elapsed() { echo $(( $(date +%s) - $1 )); }
key() { printf '%s\n' "$@" | sha256sum | cut -c1-16; }

# save REF ARCHIVE STAMP: podman save, unless ARCHIVE was made from the same STAMP. podman save
# refuses to overwrite an archive, so the old one goes first.
archive_current() { [ -f "$out/$1" ] && [ -f "$out/$1.key" ] && [ "$(cat "$out/$1.key")" = "$2" ]; }
save() {
  local ref=$1 archive=$2 stamp=$3
  rm -f "$out/$archive" "$out/$archive.key"
  podman save -q -o "$out/$archive" "$ref" >/dev/null
  printf '%s\n' "$stamp" > "$out/$archive.key"
}

# 1. The Debian root file system, cached as a tarball (numeric owners kept).
rootfs_key=$(key "$SUITE" minbase "$MIRROR" "$PACKAGES")
rootfs_tar=$cache_root/rootfs-$SUITE-$rootfs_key/rootfs.tar
if [ ! -f "$rootfs_tar" ]; then
  start=$(date +%s)
  echo "build.sh: debootstrap $SUITE (minbase, $PACKAGES)" >&2
  if ! debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$scratch/rootfs" "$MIRROR" >"$scratch/debootstrap.log" 2>&1; then
    echo "build.sh: debootstrap failed; last lines of its log:" >&2
    tail -n 30 "$scratch/debootstrap.log" >&2
    exit 1
  fi
  rm -rf "$scratch/rootfs/var/cache/apt/archives/"*.deb "$scratch/rootfs/var/lib/apt/lists/"*
  mkdir -p "$(dirname "$rootfs_tar")"
  tar --numeric-owner -C "$scratch/rootfs" -cf "$rootfs_tar.tmp" .
  mv "$rootfs_tar.tmp" "$rootfs_tar"
  rm -rf "$scratch/rootfs"
  echo "build.sh: root file system built in $(elapsed "$start") s: $rootfs_tar" >&2
fi

# 2. The application image: the root file system as one layer.
app_key=$(key "$rootfs_key" "$APP_REF")
if archive_current app.tar "$app_key"; then
  echo "build.sh: app.tar is current" >&2
else
  start=$(date +%s)
  podman rmi -f "$APP_REF" >/dev/null 2>&1 || true
  podman import -q "$rootfs_tar" "$APP_REF" >/dev/null
  save "$APP_REF" app.tar "$app_key"
  echo "build.sh: $APP_REF in $(elapsed "$start") s" >&2
fi

# 3. The flux view image: the application image plus one layer with flux-core, flux-sched and a
# view of them, laid out as flux-init.sh expects (generators/templates/init.sh):
#   /opt/software/flux-core-<v>        both installs (DESTDIR=...) in flux-core's prefix, as the
#                                      operator's views have them: flux-core's rc1 loads Fluxion
#   /opt/software/flux-core-<v>-deps   the non-glibc libraries flux links, found through RUNPATH
#   /opt/views/._view/<hash>           symlinks to every file of the install (a spack view)
#   /opt/view -> /opt/views/._view/<hash>
# The init container copies the view (symlinks) and /opt/software to the shared volume; the broker
# container copies the software to its own /opt/software, so the links resolve there.
flux_root=$("$here/build-flux-core.sh")
sched_root=$("$here/build-flux-sched.sh")
prefix=/opt/software/flux-core-$FLUX_VERSION
deps=$prefix-deps
view_key=$(key "$app_key" "$flux_root" "$sched_root" "$(sha256sum "$0" | cut -c1-64)" "$VIEW_REF")
view_hash=$(key "$flux_root" "$sched_root" | cut -c1-16)$(key "$prefix" | cut -c1-16)
if archive_current flux-view.tar "$view_key"; then
  echo "build.sh: flux-view.tar is current" >&2
else
  start=$(date +%s)
  layer=$scratch/view
  mkdir -p "$layer/opt/software" "$layer/opt/views/._view"
  cp -a "$flux_root$prefix" "$layer$prefix"
  cp -a "$sched_root$prefix/." "$layer$prefix/"
  mkdir -p "$layer$deps/lib"

  # Bundle what the ELF files link outside glibc (whatever the application image has, flux must
  # not depend on it), and point every ELF file's RUNPATH at the install and the bundle, so
  # dependencies of dependencies resolve too.
  is_elf() { [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; }
  mapfile -t elves < <(find "$layer$prefix" -type f | while read -r f; do if is_elf "$f"; then echo "$f"; fi; done)
  glibc='^(ld-linux-x86-64\.so\.2|libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|librt\.so\.1|libresolv\.so\.2|libutil\.so\.1|libanl\.so\.1|linux-vdso\.so\.1)$'
  for f in "${elves[@]}"; do
    LD_LIBRARY_PATH="$layer$prefix/lib" ldd "$f" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
  done | sort -u | while read -r soname path; do
    if [[ "$soname" =~ $glibc ]] || [[ "$path" == "$layer"* ]]; then
      continue
    fi
    cp -L "$path" "$layer$deps/lib/$soname"
  done
  for f in "${elves[@]}"; do
    # Only dynamic ELF files have a RUNPATH to set (patchelf cannot read one from others).
    if rpath=$(patchelf --print-rpath "$f" 2>/dev/null); then
      chmod u+w "$f"
      patchelf --set-rpath "${rpath:+$rpath:}$prefix/lib:$deps/lib" "$f"
    fi
  done
  for f in "$layer$deps/lib/"*; do
    chmod u+w "$f"
    patchelf --set-rpath "$deps/lib" "$f"
  done
  # Check inside the image's file system (chroot): every library an ELF file of flux needs
  # resolves, and outside glibc only to /opt/software.
  check=$scratch/check
  mkdir -p "$check"
  tar -C "$check" -xf "$rootfs_tar"
  cp -a "$layer/opt/software" "$check/opt/"
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
  rm -rf "$check"
  if [ -n "$bad" ]; then
    echo "build.sh: libraries of the flux view that do not resolve inside /opt/software:" >&2
    echo "$bad" >&2
    exit 1
  fi

  # The spack-like view: real directories, a symlink per file.
  viewdir=$layer/opt/views/._view/$view_hash
  (cd "$layer$prefix" && find . -mindepth 1 \( -type f -o -type l \) -print0) |
    while IFS= read -r -d '' rel; do
      rel=${rel#./}
      mkdir -p "$viewdir/$(dirname "$rel")"
      ln -s "$prefix/$rel" "$viewdir/$rel"
    done
  ln -s "/opt/views/._view/$view_hash" "$layer/opt/view"

  tar --numeric-owner --owner=0 --group=0 -C "$layer" -cf "$scratch/view-layer.tar" opt
  printf 'FROM %s\nADD view-layer.tar /\n' "$APP_REF" > "$scratch/Containerfile"
  podman rmi -f "$VIEW_REF" >/dev/null 2>&1 || true
  podman build -q --network=none -f "$scratch/Containerfile" -t "$VIEW_REF" "$scratch" >/dev/null
  save "$VIEW_REF" flux-view.tar "$view_key"
  echo "build.sh: $VIEW_REF in $(elapsed "$start") s ($(du -sh "$layer/opt" | cut -f1) added to the userland)" >&2
fi

# 4. The project image (make image), under the reference the built binary writes into keygen Jobs.
start=$(date +%s)
make -s -C "$repo" image >/dev/null
project_ref=$("$repo/bin/minicluster-fn" version | sed -n 's/^keygen image: //p')
project_id=$(podman image inspect --format '{{.Id}}' "$project_ref")
if archive_current project.tar "$project_id"; then
  echo "build.sh: project.tar is current" >&2
else
  save "$project_ref" project.tar "$project_id"
fi
echo "build.sh: $project_ref in $(elapsed "$start") s" >&2

printf '%s %s\n' "$out/app.tar" "$APP_REF" "$out/flux-view.tar" "$VIEW_REF" "$out/project.tar" "$project_ref" > "$out/images.txt"
cat "$out/images.txt"
