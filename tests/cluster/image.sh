#!/usr/bin/env bash
# Builds one of this directory's small programs (pause, probe) as a static binary in a FROM scratch
# image, localhost/minicluster-fn-live/<program>:1 (podman cannot RUN here, and nothing can be
# pulled), and saves it as an archive for `ctr images import`. Cached under $CACHE, keyed by the
# sources and the Go version. Prints the archive's path.
# usage: image.sh PROGRAM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/env.sh
. "$here/env.sh"
# shellcheck source=tools/toolchain.sh
. "$here/../../tools/toolchain.sh"
export GOFLAGS=-buildvcs=false CGO_ENABLED=0

program=${1:?usage: image.sh PROGRAM}
[ -f "$here/$program/main.go" ] || { echo "image.sh: no program $here/$program" >&2; exit 2; }
ref=localhost/minicluster-fn-live/$program:1
key=$( { go version; echo "$ref"; cat "$0" "$here/go.mod" "$here/$program"/*.go; } | sha256sum | cut -c1-16)
archive=$CACHE/live-image-$program-$key.tar
if [ -s "$archive" ]; then echo "$archive"; exit 0; fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$here" && go build -trimpath -ldflags '-s -w' -o "$work/$program" "./$program")
printf 'FROM scratch\nCOPY %s /%s\nUSER 65535:65535\nENTRYPOINT ["/%s"]\n' "$program" "$program" "$program" > "$work/Containerfile"
podman build --quiet --network=none -t "$ref" "$work" > /dev/null
mkdir -p "$CACHE"
rm -f "$archive.tmp"   # podman save refuses to overwrite an archive
podman save --quiet --format docker-archive -o "$archive.tmp" "$ref"
mv "$archive.tmp" "$archive"
echo "$archive"
