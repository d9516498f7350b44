// Attack: on GitHub's hosted runners the harness's user (`runner`) is in the `docker` group, and
// /var/run/docker.sock is root:docker 0660. In process isolation as a normal user the agent runs in
// a user namespace as the harness's uid; the kernel still honours the supplementary groups it
// inherited, and nothing covers the socket. The head's agent can then ask the daemon for a
// privileged container with / mounted: root on the runner, every /proc/<pid>/environ, the token.
// Stand-in: a file root:GROUP 0660 where the socket is, the harness (nobody) in GROUP.
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCommandAgent } from '../../src/agent/command.js';
import { type CommandWrapper, namespaceWrapper, runtimeSocketPaths } from '../../src/agent/namespace.js';

const asRoot = process.getuid?.() === 0;
const NOBODY = 65534;
const GROUP = 'sgredteam2docker';
const cleanup: string[] = [];
afterAll(() => {
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
  spawnSync('groupdel', [GROUP]);
});

describe("the harness user's docker group", () => {
  it.runIf(asRoot)('does not let the agent reach a root:docker 0660 socket', async () => {
    spawnSync('groupadd', ['-f', GROUP]);
    const gid = Number(spawnSync('getent', ['group', GROUP], { encoding: 'utf8' }).stdout.split(':')[2]);
    expect(Number.isInteger(gid)).toBe(true);
    const dir = mkdtempSync('/var/tmp/sg-redteam2-docker-');
    cleanup.push(dir);
    chmodSync(dir, 0o755);
    const sock = join(dir, 'docker.sock');
    writeFileSync(sock, 'daemon');
    chownSync(sock, 0, gid);
    chmodSync(sock, 0o660);
    const checkout = mkdtempSync('/var/tmp/sg-redteam2-docker-co-');
    cleanup.push(checkout);
    chownSync(checkout, NOBODY, NOBODY);
    // The harness as the runner user: its own uid, the docker group among its groups.
    const harness: CommandWrapper = {
      wrap(command) {
        const { file, args } = namespaceWrapper({
          checkout,
          hide: [],
          asRoot: false,
          uid: NOBODY,
          gid: NOBODY,
          // Where the harness finds the runtime (DOCKER_HOST), so it knows what to cover.
          runtimeSockets: runtimeSocketPaths({ DOCKER_HOST: `unix://${sock}` }),
        }).wrap(command);
        return {
          file: 'setpriv',
          args: [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, `--groups=${gid}`, '--', file, ...args],
        };
      },
    };
    const run = await runCommandAgent({
      // The stand-in daemon answers its reads with 'daemon'; a covered socket reads as /dev/null.
      command: `grep -q daemon ${sock} 2>/dev/null && echo REACHED; echo '{"reply":"done"}'`,
      cwd: checkout,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      input: { message: 'hi', context: {} },
      timeoutMs: 60_000,
      wrapper: harness,
    });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).not.toContain('REACHED');
  });
});
