// Attack: as a normal user the agent shares the harness's HOME. Besides git's config (covered
// earlier), the harness reads two more files there that decide what it talks to or runs: the
// Testcontainers properties (`docker.host`, `tc.host`: the Docker daemon the next run's database
// and agent containers come from) and Docker's config (a `credsStore` is a program the next image
// pull runs). An agent can write neither, nor create them when absent.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCommandAgent } from '../../src/agent/command.js';
import { type CommandWrapper, namespaceWrapper } from '../../src/agent/namespace.js';
import { agentSharedDir } from '../helpers/agent-dir.js';

const asRoot = process.getuid?.() === 0;
const NOBODY = 65534;
const top = agentSharedDir('sg-home-config-');
afterAll(() => rmSync(top, { recursive: true, force: true }));

function asNobody(inner: CommandWrapper): CommandWrapper {
  return {
    wrap(command) {
      const { file, args } = inner.wrap(command);
      return {
        file: 'setpriv',
        args: [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--', file, ...args],
      };
    },
  };
}

describe("the agent rewrites the harness's Docker settings in HOME", () => {
  it.runIf(asRoot)('cannot write the Testcontainers properties or the Docker config', async () => {
    const home = join(top, 'home');
    const checkout = join(top, 'checkout');
    mkdirSync(home);
    mkdirSync(checkout);
    execFileSync('chown', ['-R', `${NOBODY}:${NOBODY}`, top]);
    const tries = {
      'testcontainers-properties': `echo docker.host=tcp://203.0.113.7:2375 > ${home}/.testcontainers.properties`,
      'docker-config': `mkdir -p ${home}/.docker && echo '{"credsStore":"planted"}' > ${home}/.docker/config.json`,
    };
    const command = [
      ...Object.entries(tries).map(([name, cmd]) => `(${cmd}) 2>/dev/null && echo "${name}: done"`),
      'echo \'{"reply":"done"}\'',
    ].join('\n');
    const run = await runCommandAgent({
      command,
      cwd: checkout,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home },
      input: { message: 'hi', context: {} },
      timeoutMs: 60_000,
      wrapper: asNobody(
        namespaceWrapper({ checkout, hide: [], asRoot: false, uid: NOBODY, gid: NOBODY, home }),
      ),
    });
    expect(run.exitCode).toBe(0);
    expect(run.stdout.split('\n').filter((l) => l.endsWith(': done'))).toEqual([]);
    expect(readFileSync(join(home, '.testcontainers.properties'), 'utf8')).toBe('');
  });
});
