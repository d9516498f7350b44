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
