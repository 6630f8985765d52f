#!/usr/bin/env bash
# Builds the sandbox image without pulling anything from a registry: debootstrap a minimal
# Debian, add the packages of packages.txt and a non-root user, then `docker import` it.
# Usage: build-rootfs.sh IMAGE RECIPE_HASH [SUITE]
# SUITE is Debian's (default bookworm, Python 3.11); trixie brings Python 3.13 and bullseye 3.9,
# for repositories whose requires-python excludes 3.11 (setup.sh --python).
set -euo pipefail
image=$1
recipe_hash=$2
suite=${3:-bookworm}
here=$(cd "$(dirname "$0")" && pwd)
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
rootfs=$(mktemp -d /tmp/durable-debugger-rootfs.XXXXXX)
trap 'rm -rf "$rootfs"' EXIT

packages=$(grep -v '^#' "$here/packages.txt" | grep -v '^$' | paste -sd, -)
log=${DURABLE_DEBUGGER_HOME:-/tmp}/debootstrap.log
if ! debootstrap --variant=minbase --include="$packages" "$suite" "$rootfs" "$mirror" >"$log" 2>&1; then
  tail -n 30 "$log" >&2
  echo "debootstrap failed; its log is $log" >&2
  exit 1
fi
chroot "$rootfs" useradd --uid 1000 --user-group --no-create-home --shell /bin/sh sandbox
mkdir -p "$rootfs/workspace"
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* \
  "$rootfs"/usr/share/doc "$rootfs"/usr/share/man "$rootfs"/usr/share/info "$rootfs"/debootstrap

python_version=$(chroot "$rootfs" python3 -c 'import platform; print(platform.python_version())')
tar -C "$rootfs" -c . | docker import \
  --change "LABEL durable-debugger.recipe=$recipe_hash" \
  --change "LABEL durable-debugger.python=$python_version" \
  --change 'WORKDIR /workspace' \
  --change 'CMD ["sleep", "infinity"]' \
  - "$image" >/dev/null
