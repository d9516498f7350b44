// agent.serve in the bubblewrap sandbox in user-namespace mode: the harness as a normal user without
// sudo (nobody, uid 65534), so bubblewrap makes a user namespace (--unshare-user) and the server
// keeps the harness's uid. The served hunter (the attacks of allowlist-runner-layout.test.ts, from a
// long-lived server) runs on both sides of a compare in a runner's layout with the job's token in
// the harness's environment: its server must be in its own PID namespace (few processes, no token
// in any /proc entry), on a loopback of its own (the test's PostgreSQL on 127.0.0.1:5432, which the
// harness uses, does not answer; no port does but its tools'), write none of the runner's files,
// while its tools answer and the verdict is computed; the report says user namespace (weaker).
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GradedEpisode } from '../../src/model/episode.js';
import type { Report } from '../../src/model/report.js';
import { AS_ROOT, NOBODY, nobodyArgs } from '../helpers/as-nobody.js';
import { TEST_DATABASE_URL } from '../helpers/engines.js';
import { asServed, attackSuite } from './attack-suite.js';
import { JOB_TOKEN, persistCheckoutToken, runnerLayout } from './runner-layout.js';

const ROOT = join(import.meta.dirname, '..', '..');
const cleanup: string[] = [];
afterAll(() => {
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
});

function readOrNull(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/** Whether nobody can make a user namespace here with bubblewrap (else the mode cannot be tested). */
function usernsForNobody(): boolean {
  const res = spawnSync(
    'setpriv',
    nobodyArgs('bwrap', ['--unshare-user', '--unshare-pid', '--ro-bind', '/', '/', 'true']),
    { stdio: 'ignore' },
  );
  return res.status === 0;
}

describe.runIf(AS_ROOT && process.platform === 'linux')(
  'a served agent in the sandbox of a harness without root or sudo (user namespace)',
  () => {
    beforeAll(() => {
      if (!usernsForNobody()) throw new Error('nobody cannot make a user namespace with bwrap here');
    });

    it('runs in its own PID namespace on its own loopback, reaches its tools only, and the report says user namespace (weaker)', () => {
      const layout = runnerLayout();
      cleanup.push(layout.root);
      const context = { needles: layout.needles, targets: layout.targets, gitConfigs: ['.git/config'] };
      const base = attackSuite('allowlist-hunter.mjs', context, layout.workspaceParent);
      const head = attackSuite('allowlist-hunter.mjs', context, layout.workspaceParent);
      asServed(base);
      asServed(head);
      const gitConfig = persistCheckoutToken(head.dir);
      // Everything is the harness user's, as a runner's files are its user's.
      execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, layout.root]);
      const before = layout.targets.map(readOrNull);
      const configBefore = readFileSync(gitConfig, 'utf8');
      const out = join(layout.root, 'out');
      const cli = [process.execPath, '--import', 'tsx', join(ROOT, 'src/cli/index.ts'), 'compare'];
      cli.push('--base', base.dir, '--head', head.dir, '--engine', 'postgres', '--out', out);
      const res = spawnSync('setpriv', nobodyArgs(cli[0], cli.slice(1)), {
        cwd: ROOT,
        // The runner's environment, tokens included, and the test's PostgreSQL on 127.0.0.1:5432.
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          ...layout.env,
          STATEGATE_DATABASE_URL: TEST_DATABASE_URL,
        },
        encoding: 'utf8',
        timeout: 400_000,
      });
      const said = res.stdout + res.stderr;
      expect(TEST_DATABASE_URL).toContain('127.0.0.1:5432');
      expect(said).toContain('head: agent server (in its sandbox) on http://127.0.0.1:');
      expect(said).toContain('base: agent server (in its sandbox) on http://127.0.0.1:');

      const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as Report;
      expect(report.agent_isolation).toMatchObject({
        mode: 'namespaces',
        ran: 'sandbox',
        uid: 'harness',
        network: 'own',
      });
      expect(report.agent_isolation?.note).toBe(
        "agent isolation: PID and mount namespaces in a bubblewrap sandbox (allowlisted filesystem, loopback-only network), agent keeps the harness's uid in a user namespace (weaker: no root or passwordless sudo)",
      );
      // Weaker than the default: in bold, first under the verdict.
      expect(readFileSync(join(out, 'report.md'), 'utf8')).toContain(`**${report.agent_isolation?.note}**`);
      // The tools answered both servers and the gate decided.
      expect(['PASS', 'WARN', 'BLOCK']).toContain(report.verdict);
      expect(report.cases.map((c) => c.id)).toEqual(['attack']);

      const episodes = readFileSync(join(out, 'episodes.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as GradedEpisode);
      expect(episodes.map((e) => e.record.side).sort()).toEqual(['base', 'head']);
      const log = readOrNull(join(out, 'agent-server-head.log')) ?? '';
      for (const e of episodes) {
        const text = e.record.agent.result?.reply;
        if (text === undefined) throw new Error(`no result: ${e.record.agent.resultError}\n${said}\n${log}`);
        const found = JSON.parse(text);
        // The harness's uid, kept in the user namespace.
        expect(found.uid).toBe(NOBODY);
        // Its own PID namespace: a handful of processes, none of them the harness with its token.
        expect(found.pids).toBeLessThan(10);
        expect(found.procHits).toEqual([]);
        // Its own loopback: not the PostgreSQL server the harness uses, no port but its tools'.
        expect(found.open).not.toContain(5432);
        expect(found.open).toEqual([]);
        expect(found.reachesTools).toBe(true);
        // The runner's folders are not there, though the harness's user (its own uid) may write them.
        // Keeping its uid, it may make folders in its sandbox's own skeleton and /tmp (where it then
        // "wrote" the targets' paths afresh): nothing of that reaches the machine (checked below).
        expect(found.visible).toEqual([]);
        expect(found.gitConfigHits).toEqual([]);
      }
      layout.targets.forEach((t, i) => {
        expect(readOrNull(t), t).toBe(before[i]);
      });
      expect(readFileSync(gitConfig, 'utf8')).toBe(configBefore);
      expect(configBefore).toContain(JOB_TOKEN);
      expect(readFileSync(join(layout.home, '.bashrc'), 'utf8')).toBe('# the runner user\n');
    });
  },
);
