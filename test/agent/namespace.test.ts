// The namespace runner on its own: as a normal user (user namespaces), what the agent can and
// cannot undo from inside; how a stop request reaches it; and the one line said when namespaces
// are not available.
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { runCommandAgent } from '../../src/agent/command.js';
import { gitMetadata, isolationLine, namespaceWrapper, probeIsolation } from '../../src/agent/namespace.js';
import { renderMarkdown } from '../../src/report/markdown.js';
import { AS_ROOT, NOBODY, REPLY_DONE, runAgentAsNobody } from '../helpers/as-nobody.js';
import { sampleReport } from '../report/fixtures.js';

const cleanup: string[] = [];
afterAll(() => {
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
});

/** A directory tree owned by nobody: a checkout under /tmp, and a private directory outside it. */
function nobodysFiles(): { checkout: string; hidden: string } {
  const checkout = mkdtempSync(join(tmpdir(), 'sg-ns-checkout-'));
  const outside = mkdtempSync('/var/tmp/sg-ns-private-');
  cleanup.push(checkout, outside);
  const hidden = join(outside, 'private');
  mkdirSync(hidden);
  writeFileSync(join(hidden, 'secret'), 'harness secret\n');
  writeFileSync(join(checkout, 'agent-file'), 'agent code\n');
  mkdirSync(join(checkout, 'drop'));
  for (const p of [
    checkout,
    join(checkout, 'agent-file'),
    join(checkout, 'drop'),
    outside,
    hidden,
    join(hidden, 'secret'),
  ])
    chownSync(p, NOBODY, NOBODY);
  chmodSync(outside, 0o755);
  return { checkout, hidden };
}

describe('namespaces as a normal user', () => {
  it.runIf(AS_ROOT)('hide the private directory for good, keep the uid and end every daemon', async () => {
    const { checkout, hidden } = nobodysFiles();
    const command = [
      'id -u',
      'pwd',
      'cat agent-file',
      `cat ${hidden}/secret 2>&1 || echo no-secret`,
      `umount ${hidden} 2>&1 || echo no-umount`,
      // A new user namespace gives back capabilities, but not over the mounts it inherited.
      `unshare --user --map-root-user --mount sh -c 'umount ${hidden} && cat ${hidden}/secret' 2>&1 || echo no-nested-umount`,
      'ls /proc | grep -c "^[0-9]"',
      'setsid sh -c "sleep 2; echo late > drop/late" sg-ns-daemon &',
      REPLY_DONE,
    ].join('\n');
    const run = await runAgentAsNobody({ command, checkout, hide: [hidden] });
    const lines = run.stdout.trim().split('\n');
    expect(run.exitCode).toBe(0);
    expect(lines[0]).toBe(String(NOBODY));
    expect(lines[1]).toBe(checkout);
    expect(lines[2]).toBe('agent code');
    expect(run.stdout).not.toContain('harness secret');
    expect(lines).toContain('no-secret');
    expect(lines).toContain('no-umount');
    expect(lines).toContain('no-nested-umount');
    expect(Number(lines.at(-2))).toBeLessThan(10);
    await sleep(4000);
    expect(readdirSync(join(checkout, 'drop'))).toEqual([]);
  });
});

describe('git metadata made read-only for the agent', () => {
  it("is a worktree's .git file, its gitdir and the common dir; a subdirectory's is its repository's", () => {
    const root = mkdtempSync(join(tmpdir(), 'sg-ns-git-'));
    cleanup.push(root);
    const repo = join(root, 'repo');
    const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, stdio: 'pipe' });
    mkdirSync(join(repo, 'sub'), { recursive: true });
    git('init', '-q');
    writeFileSync(join(repo, 'sub', 'a'), 'a\n');
    git('add', '.');
    git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'a');
    git('worktree', 'add', '-q', '--detach', join(root, 'wt'));
    expect(gitMetadata(join(repo, 'sub'))).toEqual([join(repo, '.git')]);
    expect(gitMetadata(join(root, 'wt', 'sub'))).toEqual([
      join(root, 'wt', '.git'),
      join(repo, '.git', 'worktrees', 'wt'),
      join(repo, '.git'),
    ]);
  });
});

describe('a stop request', () => {
  it.runIf(AS_ROOT)('reaches the agent through the namespace init, which exits with it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sg-ns-stop-'));
    cleanup.push(dir);
    const wrapper = namespaceWrapper({ checkout: dir, hide: [], asRoot: true, uid: 0, gid: 0 });
    const run = await runCommandAgent({
      command: 'trap "echo stopping; exit 3" TERM; echo ready >&2; sleep 300 & wait',
      cwd: dir,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      input: { message: 'hi', context: {} },
      // Long enough for the namespace and the shell's trap to be set up on a loaded machine.
      timeoutMs: 10_000,
      graceMs: 20_000,
      wrapper,
    });
    expect(run.timedOut).toBe(true);
    // The agent shares the harness's process group, so the group's SIGTERM reaches it as well as the
    // one the namespace init passes on: on a loaded machine the two arrive apart and its trap runs
    // twice (bubblewrap, the default, starts the agent in a group of its own). One is what matters.
    expect(run.stdout).toMatch(/^(stopping\n){1,2}$/);
    expect(run.exitCode).toBe(3);
  });
});

describe('without namespaces', () => {
  it('falls back when unshare is refused, with the reason it gave', async () => {
    // What unshare prints where user namespaces are forbidden.
    const dir = mkdtempSync(join(tmpdir(), 'sg-ns-refused-'));
    cleanup.push(dir);
    const refused = join(dir, 'unshare');
    writeFileSync(
      refused,
      '#!/bin/sh\necho "unshare: unshare failed: Operation not permitted" >&2\nexit 1\n',
      {
        mode: 0o755,
      },
    );
    const status = await probeIsolation(refused, '/nonexistent/bwrap');
    expect(status).toEqual({
      mode: 'process-groups',
      reason:
        'unshare: unshare failed: Operation not permitted; /nonexistent/bwrap: not found (install the bubblewrap package: sudo apt-get install bubblewrap)',
    });
    expect(isolationLine(status)).toBe(
      'agent isolation: process groups only (unshare: unshare failed: Operation not permitted; /nonexistent/bwrap: not found (install the bubblewrap package: sudo apt-get install bubblewrap)); use agent.isolation: container',
    );
  });

  it('says once, in one line, that only process groups hold the agent', async () => {
    const status = await probeIsolation('/nonexistent/unshare', '/nonexistent/bwrap');
    expect(status).toEqual({
      mode: 'process-groups',
      reason:
        '/nonexistent/unshare: not found; /nonexistent/bwrap: not found (install the bubblewrap package: sudo apt-get install bubblewrap)',
    });
    const note = isolationLine(status);
    expect(note).toBe(
      'agent isolation: process groups only (/nonexistent/unshare: not found; /nonexistent/bwrap: not found (install the bubblewrap package: sudo apt-get install bubblewrap)); use agent.isolation: container',
    );
    const markdown = renderMarkdown({ ...sampleReport(), agent_isolation: { mode: 'process-groups', note } });
    expect(markdown).toContain('agent isolation: process groups only');
    const normal = renderMarkdown({
      ...sampleReport(),
      agent_isolation: { mode: 'namespaces', note: 'agent isolation: PID, mount and user namespaces' },
    });
    // Said first, under the verdict: in bold only when weaker than the default.
    expect(markdown).toContain(`**${note}**`);
    expect(normal.split('\n').slice(1, 4)).toEqual([
      expect.stringMatching(/^## Stategate: /),
      '',
      'agent isolation: PID, mount and user namespaces',
    ]);
  });
});
