// Attack: on GitHub's hosted runners the harness's user (`runner`) is in the `docker` group, and
// /var/run/docker.sock is root:docker 0660. In process isolation as a normal user the agent runs in
// a user namespace as the harness's uid; the kernel still honours the supplementary groups it
// inherited, and nothing covers the socket. The head's agent can then ask the daemon for a
// privileged container with / mounted: root on the runner, every /proc/<pid>/environ, the token.
// Stand-in: a file root:GROUP 0660 where the socket is, the harness (nobody) in GROUP.
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runtimeSocketPaths } from '../../src/agent/namespace.js';
import { AS_ROOT, nobodysDir, REPLY_DONE, removeAfterFile, runAgentAsNobody } from '../helpers/as-nobody.js';

const GROUP = 'sgtestdocker';
afterAll(() => {
  spawnSync('groupdel', [GROUP]);
});

describe("the harness user's docker group", () => {
  it.runIf(AS_ROOT)('does not let the agent reach a root:docker 0660 socket', async () => {
    spawnSync('groupadd', ['-f', GROUP]);
    const gid = Number(spawnSync('getent', ['group', GROUP], { encoding: 'utf8' }).stdout.split(':')[2]);
    expect(Number.isInteger(gid)).toBe(true);
    const dir = removeAfterFile(mkdtempSync('/var/tmp/sg-docker-group-'));
    chmodSync(dir, 0o755);
    const sock = join(dir, 'docker.sock');
    writeFileSync(sock, 'daemon');
    chownSync(sock, 0, gid);
    chmodSync(sock, 0o660);
    const run = await runAgentAsNobody({
      // The stand-in daemon answers its reads with 'daemon'; a covered socket reads as /dev/null.
      command: `grep -q daemon ${sock} 2>/dev/null && echo REACHED; ${REPLY_DONE}`,
      checkout: nobodysDir('sg-docker-group-co-'),
      // Where the harness finds the runtime (DOCKER_HOST), so it knows what to cover.
      runtimeSockets: runtimeSocketPaths({ DOCKER_HOST: `unix://${sock}` }),
      // The harness as the runner user: its own uid, the docker group among its groups.
      groups: [gid],
    });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).not.toContain('REACHED');
  });
});
