// Whether the bubblewrap sandbox (sandbox.ts) works here, and with which privileges: as root; as a
// normal user through passwordless sudo (GitHub's hosted runners, where Ubuntu refuses unprivileged
// user namespaces), unless STATEGATE_SUDO=never; else in a user namespace. Probed once per run by
// running a command in it that must see only its own processes and have the expected uid.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_GRACE_MS } from './process-group.js';
import { runInGroup } from './run-process.js';
import { type SandboxStatus, type SandboxVia, SideSandbox, sandboxAgentUid } from './sandbox.js';

const PROBE_TIMEOUT_MS = 60_000;

/** What a user is told to run where the sandbox lacks bubblewrap (the action runs it itself). */
export const INSTALL_HINT = 'sudo apt-get install bubblewrap';

export type SandboxProbe = { ok: true; status: SandboxStatus } | { ok: false; reason: string };

/** Whether `sudo -n` runs a command without asking (a password, a tty) here. */
export function sudoWorks(sudo: string): boolean {
  const res = spawnSync(sudo, ['-n', 'true'], { stdio: 'ignore', timeout: 10_000 });
  return res.status === 0;
}

async function tryVia(status: SandboxStatus): Promise<string | null> {
  const dir = mkdtempSync(join(tmpdir(), 'stategate-probe-'));
  const sandbox = new SideSandbox({ checkout: dir, hide: () => [], status });
  try {
    const run = await runInGroup({
      // What an agent needs: its own /proc, its own uid, and no route to this machine's loopback.
      command: 'test "$(ls /proc | grep -c "^[0-9]")" -lt 10 && id -u',
      cwd: dir,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      timeoutMs: PROBE_TIMEOUT_MS,
      graceMs: DEFAULT_GRACE_MS,
      maxOutputBytes: 64 * 1024,
      wrapper: sandbox,
    });
    const uid = Number(run.stdout.text().trim().split('\n').at(-1));
    if (run.exitCode === 0 && uid === sandboxAgentUid(status)) return null;
    const text = `${run.spawnError ?? ''}\n${run.stderr.text()}\n${run.stdout.text()}`;
    return (text.split('\n').find((l) => l.trim() !== '') ?? `exited with code ${run.exitCode}`)
      .trim()
      .slice(0, 200);
  } finally {
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The sandbox this harness can have: `bwrap` and `setpriv` found on PATH (or given as paths), then
 * root, sudo or a user namespace, the first that runs the probe.
 */
export async function probeSandbox(
  find: (name: string) => string | null,
  bwrapName = 'bwrap',
  sudoMode: 'auto' | 'never' = 'auto',
): Promise<SandboxProbe> {
  if (process.platform !== 'linux')
    return { ok: false, reason: `bubblewrap needs Linux, this is ${process.platform}` };
  const bwrap = find(bwrapName);
  if (bwrap === null)
    return { ok: false, reason: `${bwrapName}: not found (install the bubblewrap package: ${INSTALL_HINT})` };
  const setpriv = find('setpriv') ?? undefined;
  const vias: SandboxVia[] = [];
  let sudo: string | undefined;
  if (process.getuid?.() === 0) vias.push('root');
  else {
    sudo = find('sudo') ?? undefined;
    if (sudoMode === 'auto' && sudo && sudoWorks(sudo)) vias.push('sudo');
    vias.push('userns');
  }
  const reasons: string[] = [];
  for (const via of vias) {
    if (via !== 'userns' && !setpriv) {
      reasons.push(`${via}: setpriv not found`);
      continue;
    }
    const status: SandboxStatus = {
      bwrap,
      via,
      ...(setpriv ? { setpriv } : {}),
      ...(via === 'sudo' ? { sudo } : {}),
    };
    const why = await tryVia(status);
    if (why === null) return { ok: true, status };
    reasons.push(`${via}: ${why}`);
  }
  return { ok: false, reason: `bwrap ${reasons.join('; ')}` };
}
