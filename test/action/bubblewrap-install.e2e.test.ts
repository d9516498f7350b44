// The action on a runner without bubblewrap (GitHub's hosted runners ship without it): it installs
// the package with the real apt-get before the run, says so in its log, and the agents then run in
// the bubblewrap sandbox. This machine has bubblewrap (other tests need it), so the step's PATH is
// a folder of links to this machine's programs but bwrap: the action does not find it, installs it
// (apt-get: already the newest version), and finds it where the package puts it. With
// install-bubblewrap: false nothing is installed and the run says the unshare fallback ran, and how
// to install bubblewrap. As root, then as the hosted runner stand-in (runner with passwordless sudo,
// user namespaces refused: test/security/runner-layout.ts), where it installs through sudo, and
// where, with sudo: never, nothing is installed and the head's agent does not run.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asRunner, RUNNER_UID } from '../security/runner-layout.js';
import { agentVersion, checkout } from './demo-repo.js';
import { Harness, warnings } from './harness.js';

const asRoot = process.getuid?.() === 0;
const PROJECT = join(import.meta.dirname, '..', '..');
let h: Harness;
let noBwrap: string;
let bin: string;

beforeAll(async () => {
  h = await Harness.start([agentVersion('1.2.4')], { 'careful-fix': [agentVersion('1.3.1')] });
  // Outside /tmp: the harness runs programs only from PATH folders no agent could write.
  noBwrap = mkdtempSync('/opt/sg-no-bwrap-');
  // The agents (uid 65534) run these programs too.
  chmodSync(noBwrap, 0o755);
  bin = join(noBwrap, 'bin');
  mkdirSync(bin, { mode: 0o755 });
  for (const dir of ['/usr/local/bin', '/usr/sbin', '/usr/bin'])
    for (const name of readdirSync(dir)) {
      if (name === 'bwrap') continue;
      try {
        symlinkSync(join(dir, name), join(bin, name));
      } catch {
        // The same name in an earlier folder: that one, as PATH would.
      }
    }
}, 300_000);
afterAll(async () => {
  await h?.close();
  if (noBwrap) rmSync(noBwrap, { recursive: true, force: true });
});

function isolationNote(workspace: string): string {
  const report = JSON.parse(readFileSync(join(workspace, '.stategate', 'report.json'), 'utf8'));
  return report.agent_isolation.note;
}

describe.runIf(asRoot && process.platform === 'linux')('the action where bubblewrap is missing', () => {
  it('installs it with apt-get, says so, and the agents run in the sandbox', async () => {
    const r = await h.step('careful-fix', h.pullRequestEvent(3, 'careful-fix'), { repeats: 1 }, undefined, {
      PATH: bin,
    });
    const log = r.stdout + r.stderr;
    expect(log).toContain('installing bubblewrap for the agent sandbox (apt-get install bubblewrap)');
    expect(log).toMatch(/bubblewrap: \/usr\/bin\/bwrap \(apt-get: bubblewrap is already the newest version/);
    expect(warnings(r)).toEqual([]);
    expect(r.outputs.verdict, log).toBeDefined();
    expect(isolationNote(r.workspace)).toContain('bubblewrap sandbox');
  });

  it('with install-bubblewrap: false installs nothing; the note says the fallback ran and how to install it', async () => {
    const r = await h.step(
      'careful-fix',
      h.pullRequestEvent(3, 'careful-fix'),
      { repeats: 1, 'install-bubblewrap': 'false' },
      undefined,
      { PATH: bin },
    );
    const log = r.stdout + r.stderr;
    expect(log).not.toContain('installing bubblewrap');
    expect(r.outputs.verdict, log).toBeDefined();
    const note = isolationNote(r.workspace);
    expect(note).toContain('the unshare fallback, weaker');
    expect(note).toContain(
      'bwrap: not found (install the bubblewrap package: sudo apt-get install bubblewrap)',
    );
  });
});

describe.runIf(asRoot && process.platform === 'linux')(
  'the action where bubblewrap is missing, on the hosted runner stand-in',
  () => {
    let workspaces = 0;
    beforeAll(() => {
      // Idempotent: bubblewrap, sudo, python3-seccomp and the runner user.
      execFileSync(join(PROJECT, 'scripts', 'runner-standin.sh'), { stdio: 'pipe' });
    });

    /** The step as runner, in a checkout of runner's; everything of the step's is runner's, as on a runner. */
    async function asHostedRunner(extra: Record<string, string | number>) {
      const ws = checkout(h.repo, 'careful-fix', join(h.root, `runner-ws-${++workspaces}`));
      h.as = (argv) => {
        // Called once the step's files (event, outputs, RUNNER_TEMP) are written: runner's too.
        execFileSync('chown', ['-R', `${RUNNER_UID}:${RUNNER_UID}`, h.root]);
        return ['/usr/bin/python3', ...asRunner(argv)];
      };
      try {
        return await h.step('careful-fix', h.pullRequestEvent(3, 'careful-fix'), extra, ws, {
          PATH: bin,
          HOME: '/home/runner',
        });
      } finally {
        h.as = undefined;
        // root's again, for the next checkout (git refuses a repository of another user).
        execFileSync('chown', ['-R', '0:0', h.root]);
      }
    }

    it('installs it through sudo apt-get, and the agents run in the sandbox through sudo', async () => {
      const r = await asHostedRunner({ repeats: 1 });
      const log = r.stdout + r.stderr;
      expect(log).toContain('installing bubblewrap for the agent sandbox (sudo apt-get install bubblewrap)');
      expect(log).toMatch(
        /bubblewrap: \/usr\/bin\/bwrap \(apt-get: bubblewrap is already the newest version/,
      );
      expect(warnings(r)).toEqual([]);
      expect(r.outputs.verdict, log).toBeDefined();
      expect(isolationNote(r.workspace)).toContain('agent runs as uid 65534 (through sudo)');
    });

    it('with sudo: never installs nothing and the head does not run (user namespaces refused); the error says how to install it', async () => {
      const r = await asHostedRunner({ repeats: 1, sudo: 'never' });
      const log = r.stdout + r.stderr;
      expect(log).not.toContain('installing bubblewrap');
      expect(log).toContain('bubblewrap not installed: bwrap: not found; not installed with sudo: never');
      expect(r.code).toBe(1);
      expect(r.outputs.verdict).toBeUndefined();
      const error = r.commands.find((c) => c.command === 'error')?.message ?? '';
      expect(error).toContain("the head's agent cannot be isolated here");
      expect(error).toContain(
        'bwrap: not found (install the bubblewrap package: sudo apt-get install bubblewrap)',
      );
    });
  },
);
