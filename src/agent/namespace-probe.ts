// Which isolation agents get here, probed once per run: the bubblewrap sandbox (sandbox-probe.ts)
// and util-linux unshare with the namespaces and privilege drop of namespace.ts, each by running a
// command in it that must see only its own processes and have the expected uid.
import { spawn } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { AGENT_UID, harnessIds, type IsolationStatus, namespaceWrapper } from './namespace.js';
import { probeSandbox } from './sandbox-probe.js';

const PROBE_TIMEOUT_MS = 60_000;
const probes = new Map<string, Promise<IsolationStatus>>();

/** The absolute path of an executable on the harness's PATH (or the path itself when it has a slash). */
export function findExecutable(name: string): string | null {
  const candidates = name.includes('/')
    ? [resolve(name)]
    : (process.env.PATH ?? '')
        .split(delimiter)
        .filter(Boolean)
        .map((d) => join(d, name));
  for (const file of candidates) {
    try {
      accessSync(file, constants.X_OK);
      if (statSync(file).isFile()) return file;
    } catch {
      // Not here.
    }
  }
  return null;
}

function runProbe(name: string): Promise<IsolationStatus> {
  const unshare = findExecutable(name);
  if (unshare === null) return Promise.resolve({ mode: 'process-groups', reason: `${name}: not found` });
  const dir = mkdtempSync(join(tmpdir(), 'stategate-probe-'));
  const ids = harnessIds();
  const setpriv = findExecutable('setpriv') ?? undefined;
  const wrapper = namespaceWrapper({
    checkout: dir,
    hide: [],
    ...ids,
    home: process.env.HOME,
    unshare,
    setpriv,
  });
  // The probe asks for what an agent needs: its own /proc and a user that cannot read ours.
  const { file, args } = wrapper.wrap('test "$(ls /proc | grep -c "^[0-9]")" -lt 10 && id -u');
  return new Promise<IsolationStatus>((done) => {
    let output = '';
    const child = spawn(file, args, {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), PROBE_TIMEOUT_MS);
    child.stdout.on('data', (d: Buffer) => (output += d));
    child.stderr.on('data', (d: Buffer) => (output += d));
    child.on('error', (err) => {
      clearTimeout(timer);
      done({ mode: 'process-groups', reason: `${unshare}: ${err.message}` });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      const lines = output.trim().split('\n');
      const uid = Number(lines.at(-1));
      if (code === 0 && (ids.asRoot ? uid === AGENT_UID : uid === ids.uid))
        done({ mode: 'namespaces', asRoot: ids.asRoot, unshare, ...(setpriv ? { setpriv } : {}) });
      else {
        const why = lines.find((l) => l.trim() !== '') ?? `exited with code ${code}`;
        done({ mode: 'process-groups', reason: why.trim().slice(0, 200) });
      }
    });
  }).finally(() => rmSync(dir, { recursive: true, force: true }));
}

/**
 * How agents are isolated here, probed once per pair of binaries and process: the bubblewrap
 * sandbox when it runs, and util-linux unshare (the fallback, and agent.serve's) when it does.
 */
export function probeIsolation(
  unshare = 'unshare',
  bwrap = 'bwrap',
  sudo: 'auto' | 'never' = 'auto',
): Promise<IsolationStatus> {
  const key = `${unshare}\0${bwrap}\0${sudo}`;
  let probe = probes.get(key);
  if (!probe) {
    probe =
      process.platform === 'linux'
        ? Promise.all([probeSandbox(findExecutable, bwrap, sudo), runProbe(unshare)]).then(([sb, ns]) => {
            if (!sb.ok)
              return ns.mode === 'namespaces'
                ? { ...ns, sandboxReason: sb.reason }
                : { mode: 'process-groups' as const, reason: `${ns.reason}; ${sb.reason}` };
            const ids = harnessIds();
            return {
              mode: 'namespaces' as const,
              asRoot: ids.asRoot,
              ...(ns.mode === 'namespaces'
                ? { unshare: ns.unshare, ...(ns.setpriv ? { setpriv: ns.setpriv } : {}) }
                : {}),
              sandbox: sb.status,
            };
          })
        : Promise.resolve({
            mode: 'process-groups',
            reason: `namespaces need Linux, this is ${process.platform}`,
          });
    probes.set(key, probe);
  }
  return probe;
}
