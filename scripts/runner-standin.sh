#!/usr/bin/env bash
# Stands a GitHub hosted runner's user in on this machine, for the tests of the agent sandbox as
# that user (test/security/allowlist-sudo-runner.test.ts): bubblewrap, sudo and Debian's seccomp
# bindings installed, the user `runner` (uid 1001) with passwordless sudo. Idempotent; needs root.
set -euo pipefail
need=()
command -v bwrap >/dev/null || need+=(bubblewrap)
command -v sudo >/dev/null || need+=(sudo)
/usr/bin/python3 -c 'import seccomp' 2>/dev/null || need+=(python3-seccomp)
if [ "${#need[@]}" -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
if ! id -u runner >/dev/null 2>&1; then
  useradd -m -u 1001 -s /bin/bash runner
fi
echo 'runner ALL=(ALL) NOPASSWD:ALL' > /etc/sudoers.d/stategate-runner
chmod 0440 /etc/sudoers.d/stategate-runner
# The tests run the harness as runner from this checkout, as a hosted runner runs it from its
# workspace. A clone under a folder only root may enter (/root, mktemp -d) would hide it: let runner
# pass through each such folder above the checkout (search only: it cannot list or read them).
repo=$(cd "$(dirname "$0")/.." && pwd)
dir=$repo
while [ "$dir" != / ]; do
  dir=$(dirname "$dir")
  if ! sudo -u runner test -x "$dir"; then chmod o+x "$dir"; fi
done
