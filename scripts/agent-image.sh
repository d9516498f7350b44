#!/usr/bin/env bash
# Builds a minimal agent image for `agent.isolation: container` from this machine's own binaries:
# /bin/sh, node and python3 with the shared libraries they load, a few coreutils, and an
# unprivileged user. No registry is needed. Idempotent: an image that exists is reused.
#   scripts/agent-image.sh [NAME:TAG]   (default stategate-agent:local; honours DOCKER_HOST)
set -euo pipefail
image="${1:-stategate-agent:local}"

if docker image inspect "$image" >/dev/null 2>&1; then
  echo "agent image $image exists"
  exit 0
fi

root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT

# Copies a file with its directory path, following symlinks for the content but keeping the name.
copy() {
  local src="$1"
  [ -e "$src" ] || return 0
  mkdir -p "$root$(dirname "$src")"
  cp -L "$src" "$root$src"
}
# A binary plus every shared library ldd lists for it.
copy_bin() {
  local bin="$1"
  copy "$bin"
  ldd "$bin" 2>/dev/null | grep -o '/[^ ]*' | while read -r lib; do copy "$lib"; done
}

python="$(readlink -f /usr/bin/python3)"
for bin in /bin/sh /usr/bin/env /bin/cat /bin/sleep /bin/ls /bin/echo "$(command -v node)" "$python"; do
  copy_bin "$bin"
done
# The Python standard library (without caches and tests, to keep the image small).
pyver="$(basename "$python")"
mkdir -p "$root/usr/lib/$pyver"
tar -C "/usr/lib/$pyver" --exclude='__pycache__' --exclude='test' --exclude='site-packages' \
  --exclude='dist-packages' -cf - . | tar -C "$root/usr/lib/$pyver" -xf -
ln -sf "$(basename "$python")" "$root/usr/bin/python3"
[ -e "$root/usr/bin/node" ] || ln -sf "$(command -v node)" "$root/usr/bin/node"

mkdir -p "$root/etc" "$root/tmp" "$root/workspace" "$root/proc" "$root/dev" "$root/sys"
chmod 1777 "$root/tmp"
printf 'root:x:0:0:root:/root:/bin/sh\nagent:x:10001:10001:agent:/tmp:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n' >"$root/etc/passwd"
printf 'root:x:0:\nagent:x:10001:\nnogroup:x:65534:\n' >"$root/etc/group"

tar -C "$root" -c . | docker import \
  --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' \
  --change 'USER 10001:10001' \
  --change 'WORKDIR /workspace' \
  - "$image" >/dev/null
echo "built agent image $image"
