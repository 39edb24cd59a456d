#!/usr/bin/env bash
# deps.sh (make deps): installs the Debian packages that `make test` uses, so that a first
# `make test` on a fresh machine runs what CI runs instead of skipping. .ci/run calls it too.
# Needs root, or sudo. Installs only what is missing; a second run changes nothing.
set -euo pipefail

# The unit and e2e tests: shellcheck checks the generated scripts and the project's own; python3-zmq
# (real ZeroMQ) checks the generated CURVE certificates; time is logging.timed's /usr/bin/time;
# podman with runc builds the image and runs it as a kustomize/kpt container function (no Docker
# daemon needed).
unit_packages="shellcheck python3-zmq time podman runc git make"
# The live tests (make live). Their cluster (tests/cluster): runc and the CNI plugins run the pods
# (containerd itself is built from source by build-node.sh: Debian bookworm's 1.6 is older than
# Kubernetes v1.36 supports), nftables serves kube-proxy, openssl makes the certificates, curl
# waits for health endpoints. Their images (tests/images/build.sh): debootstrap for the Debian
# userland, patchelf to point the flux view's RUNPATHs at its bundled libraries, flux-core's build
# dependencies (Lua 5.3, since Debian 12's lua-posix has no 5.4) and flux-sched's (CMake, Boost
# Graph, yaml-cpp, libedit; its configure step checks for Python's jsonschema). Argo CD's
# components keep their caches in redis (tests/cluster/argocd-up.sh runs Debian's on the loopback;
# installing it starts no service where policy-rc.d forbids it, as in containers).
live_packages="runc containernetworking-plugins nftables iproute2 openssl curl
  debootstrap patchelf autoconf automake libtool make pkg-config gcc g++ libzmq3-dev libczmq-dev
  libjansson-dev liblz4-dev libhwloc-dev libsodium-dev libarchive-dev libsqlite3-dev uuid-dev libmunge-dev
  lua5.3 liblua5.3-dev lua-posix python3-dev python3-cffi python3-yaml python3-ply aspell jq
  cmake libboost-dev libboost-graph-dev libyaml-cpp-dev libedit-dev python3-jsonschema redis-server"

# shellcheck disable=SC2086 # lists of words
if dpkg -s $unit_packages $live_packages >/dev/null 2>&1; then
  echo "deps: every Debian package make test uses is installed"
  exit 0
fi
as_root=()
if [ "$(id -u)" != 0 ]; then
  as_root=(sudo)
fi
"${as_root[@]}" apt-get update -qq
# shellcheck disable=SC2086 # lists of words
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $unit_packages $live_packages >/dev/null
echo "deps: installed the Debian packages make test uses"
