// GitHub's hosted runners ship without bubblewrap, and their Ubuntu refuses user namespaces: the
// action installs it there (src/agent/bubblewrap-install.ts) with the real sudo and apt-get. These
// run that install on the hosted runner stand-in (runner with passwordless sudo, user namespaces
// refused), as root, and where it may not run (sudo: never; nobody, without sudo). bubblewrap is
// installed on this machine (other tests need it): the install is asked for a bwrap name PATH does
// not have, so it runs, apt-get says the package is already the newest version, and bwrap is then
// found where the package puts it, and the sandbox probe runs with it.
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBubblewrap, PACKAGED_BWRAP } from '../../src/agent/bubblewrap-install.js';
import { probeIsolation } from '../../src/agent/namespace.js';
import { nobodyArgs } from '../helpers/as-nobody.js';
import { asRunner } from './runner-layout.js';

const ROOT = join(import.meta.dirname, '..', '..');
const FIXTURE = join(ROOT, 'test', 'security', 'fixtures', 'ensure-bubblewrap.mts');
const asRoot = process.getuid?.() === 0;
/** A bwrap name no PATH folder has: the install is needed. */
const MISSING = 'stategate-test-no-bwrap';

interface Outcome {
  result: Awaited<ReturnType<typeof ensureBubblewrap>>;
  logs: string[];
  note: string;
  plan: string;
}

function outcome(res: ReturnType<typeof spawnSync>): Outcome {
  const last = String(res.stdout).trim().split('\n').at(-1) ?? '';
  if (res.status !== 0 || !last.startsWith('{'))
    throw new Error(`the fixture exited ${res.status}:\n${res.stdout}\n${res.stderr}`);
  return JSON.parse(last) as Outcome;
}

/** The fixture as the hosted runner stand-in. */
function asHostedRunner(opts: Record<string, unknown>): Outcome {
  const args = [process.execPath, '--import', 'tsx', FIXTURE, JSON.stringify(opts)];
  return outcome(
    spawnSync('/usr/bin/python3', asRunner(args), {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/home/runner' },
      encoding: 'utf8',
      timeout: 400_000,
    }),
  );
}

/** The fixture as nobody: a normal user without sudo. */
function asNobodyUser(opts: Record<string, unknown>): Outcome {
  const args = nobodyArgs(process.execPath, ['--import', 'tsx', FIXTURE, JSON.stringify(opts)]);
  return outcome(
    spawnSync('setpriv', args, {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent' },
      encoding: 'utf8',
      timeout: 120_000,
    }),
  );
}

describe.runIf(asRoot && process.platform === 'linux')('installing bubblewrap for the agent sandbox', () => {
  beforeAll(() => {
    // Idempotent: bubblewrap, sudo, python3-seccomp and the runner user (.ci/run runs it too).
    execFileSync(join(ROOT, 'scripts', 'runner-standin.sh'), { stdio: 'pipe' });
  });

  it('on the hosted runner stand-in: not found, installed through sudo apt-get, then found and the sandbox runs through sudo', () => {
    const run = asHostedRunner({ bwrap: MISSING, sudo: 'auto' });
    expect(run.logs[0]).toBe(
      'info: installing bubblewrap for the agent sandbox (sudo apt-get install bubblewrap)',
    );
    expect(run.result).toEqual({ state: 'installed', bwrap: PACKAGED_BWRAP });
    // The real apt-get, through the real sudo, said what it did.
    expect(run.logs.at(-1)).toMatch(
      /^info: bubblewrap: \/usr\/bin\/bwrap \(apt-get: bubblewrap is already the newest version .*0 newly installed/,
    );
    expect(run.logs.join('\n')).not.toContain('warn:');
    expect(run.note).toContain('bubblewrap sandbox');
    expect(run.plan).toContain('agent runs as uid 65534 (through sudo)');
  });

  it('fails closed on the stand-in when the install does not finish in time: a warning, and the head is refused', () => {
    const run = asHostedRunner({ bwrap: MISSING, sudo: 'auto', timeoutMs: 1 });
    expect(run.logs[0]).toBe(
      'info: installing bubblewrap for the agent sandbox (sudo apt-get install bubblewrap)',
    );
    expect(run.result).toEqual({
      state: 'failed',
      reason: `${MISSING}: not found; installing bubblewrap (sudo apt-get install bubblewrap) failed: timed out after 1ms`,
    });
    expect(run.logs.at(-1)).toBe(`warn: ${(run.result as { reason: string }).reason}`);
    expect(run.plan).toMatch(/^refused: the head's agent cannot be isolated here/);
  });

  it('as root: apt-get without sudo, and the same after', async () => {
    const logs: string[] = [];
    const result = await ensureBubblewrap({
      bwrap: MISSING,
      sudo: 'auto',
      log: (level, message) => logs.push(`${level}: ${message}`),
    });
    expect(logs[0]).toBe('info: installing bubblewrap for the agent sandbox (apt-get install bubblewrap)');
    expect(result).toEqual({ state: 'installed', bwrap: PACKAGED_BWRAP });
    expect(logs.at(-1)).toContain('is already the newest version');
  });

  it('does nothing where bwrap is found', async () => {
    const logs: string[] = [];
    const result = await ensureBubblewrap({ sudo: 'auto', log: (_, m) => logs.push(m) });
    expect(result).toEqual({ state: 'present', bwrap: PACKAGED_BWRAP });
    expect(logs).toEqual([]);
  });

  it('installs nothing with sudo: never; the head is refused and told how to install it', () => {
    const run = asHostedRunner({ bwrap: MISSING, sudo: 'never' });
    expect(run.logs).toEqual([]);
    expect(run.result).toEqual({
      state: 'not-attempted',
      reason: `${MISSING}: not found; not installed with sudo: never (sudo apt-get install bubblewrap)`,
    });
    // User namespaces refused and no bwrap: nothing isolates, the head's agent does not run.
    expect(run.plan).toMatch(/^refused: the head's agent cannot be isolated here/);
    expect(run.plan).toContain(
      `${MISSING}: not found (install the bubblewrap package: sudo apt-get install bubblewrap)`,
    );
  });

  it('as nobody, without sudo: no install attempted; the note names the fallback and how to install bubblewrap', () => {
    const run = asNobodyUser({ bwrap: MISSING, sudo: 'auto' });
    expect(run.logs).toEqual([]);
    expect(run.result).toEqual({
      state: 'not-attempted',
      reason: `${MISSING}: not found; no passwordless sudo to install it with (sudo apt-get install bubblewrap)`,
    });
    // User namespaces work for nobody here: the unshare fallback runs, and says it is weaker.
    expect(run.plan).toContain('the unshare fallback, weaker');
    expect(run.plan).toContain('sudo apt-get install bubblewrap');
    // Without unshare either, the head is refused, with the same advice.
    const none = asNobodyUser({ bwrap: MISSING, sudo: 'auto', unshare: '/nonexistent/unshare' });
    expect(none.plan).toMatch(/^refused: the head's agent cannot be isolated here/);
    expect(none.plan).toContain('sudo apt-get install bubblewrap');
  });

  it('the probe of the installed bwrap is the normal one', async () => {
    const status = await probeIsolation('unshare', PACKAGED_BWRAP, 'auto');
    expect(status.mode === 'namespaces' && status.sandbox?.via).toBe('root');
  });
});
