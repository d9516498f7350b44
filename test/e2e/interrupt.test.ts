// SIGTERM in the middle of a compare: no clone databases, no worktrees, no agent processes are
// left, and the partial report says "interrupted" with a verdict that is never PASS.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { agentSharedDir } from '../helpers/agent-dir.js';
import { demoRepo, git, ROOT } from '../helpers/demo-repo.js';

const ADMIN_URL = process.env.STATEGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Live (not zombie) processes whose command line contains `token`. */
function withToken(token: string): number[] {
  return readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        if (stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z') return false;
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(token);
      } catch {
        return false;
      }
    })
    .map(Number);
}

const { repo } = demoRepo(['v1.2.4']);
afterAll(() => rmSync(repo, { recursive: true, force: true }));

describe('an interrupted compare', () => {
  it('cleans up everything and writes a partial report that is not PASS', { timeout: 300_000 }, async () => {
    // A head whose agent starts a child, says it is running, and then hangs. Both carry a token in
    // their command line: an agent in its own PID namespace cannot know its pid as the host sees it.
    const token = `sg-interrupt-${process.pid}-${Date.now()}`;
    const started = agentSharedDir('sg-interrupt-');
    writeFileSync(
      join(repo, 'slow-agent.mjs'),
      `import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
spawn(process.execPath, ['-e', 'setTimeout(() => {}, 600000)', ${JSON.stringify(token)}], { stdio: 'ignore' });
writeFileSync(${JSON.stringify(started)} + '/' + process.env.STATEGATE_EPISODE, '');
setTimeout(() => {}, 600000);
`,
    );
    const config = readFileSync(join(repo, 'stategate.yml'), 'utf8').replace(
      'command: node examples/refund-agent/agent.mjs',
      `command: node slow-agent.mjs ${token}`,
    );
    writeFileSync(join(repo, 'stategate.yml'), config);
    git(repo, 'add', '-A');
    git(repo, 'commit', '-qm', 'slow head');

    const out = join(repo, '.stategate');
    const child = spawn(
      process.execPath,
      [
        join(ROOT, 'bin', 'stategate.mjs'),
        'compare',
        '--base',
        'v1.2.4',
        '--head',
        'HEAD',
        '--engine',
        'postgres',
        '--repeats',
        '1',
        '--out',
        out,
      ],
      {
        cwd: repo,
        env: { ...process.env, STATEGATE_DATABASE_URL: ADMIN_URL, CI: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.stdout.resume();
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));

    // Wait until slow agents are running, then interrupt.
    const deadline = Date.now() + 240_000;
    while (readdirSync(started).length < 2 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    expect(readdirSync(started).length).toBeGreaterThanOrEqual(2);
    child.kill('SIGTERM');
    const code = await exited;

    expect(stderr).toContain('SIGTERM received');
    expect(code, stderr).toBe(143);

    const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
    expect(report.interrupted).toBe(true);
    expect(report.verdict).not.toBe('PASS');

    // no agent process, nor its child, survives
    expect(withToken(token)).toEqual([]);
    rmSync(started, { recursive: true, force: true });
    // no worktree is left
    expect(git(repo, 'worktree', 'list').split('\n')).toHaveLength(1);
    // no database of that process is left on the server
    const client = new pg.Client({ connectionString: ADMIN_URL });
    await client.connect();
    try {
      const { rows } = await client.query(
        `SELECT d.datname FROM pg_database d
          WHERE d.datname LIKE 'sg\\_%' AND shobj_description(d.oid, 'pg_database')::jsonb->>'pid' = $1`,
        [String(child.pid)],
      );
      expect(rows).toEqual([]);
    } finally {
      await client.end();
    }
    expect(existsSync(join(out, 'episodes.jsonl'))).toBe(true);
  });
});
