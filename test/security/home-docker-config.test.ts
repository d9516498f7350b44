// Attack: as a normal user the agent shares the harness's HOME. Besides git's config (covered
// earlier), the harness reads two more files there that decide what it talks to or runs: the
// Testcontainers properties (`docker.host`, `tc.host`: the Docker daemon the next run's database
// and agent containers come from) and Docker's config (a `credsStore` is a program the next image
// pull runs). An agent can write neither, nor create them when absent.
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { agentSharedDir } from '../helpers/agent-dir.js';
import { AS_ROOT, chownToNobody, runAgentAsNobody, triesDone, tryEach } from '../helpers/as-nobody.js';

const top = agentSharedDir('sg-home-config-');
afterAll(() => rmSync(top, { recursive: true, force: true }));

describe("the agent rewrites the harness's Docker settings in HOME", () => {
  it.runIf(AS_ROOT)('cannot write the Testcontainers properties or the Docker config', async () => {
    const home = join(top, 'home');
    const checkout = join(top, 'checkout');
    mkdirSync(home);
    mkdirSync(checkout);
    chownToNobody(top);
    const command = tryEach({
      'testcontainers-properties': `echo docker.host=tcp://203.0.113.7:2375 > ${home}/.testcontainers.properties`,
      'docker-config': `mkdir -p ${home}/.docker && echo '{"credsStore":"planted"}' > ${home}/.docker/config.json`,
    });
    const run = await runAgentAsNobody({ command, checkout, home });
    expect(run.exitCode).toBe(0);
    expect(triesDone(run.stdout)).toEqual([]);
    expect(readFileSync(join(home, '.testcontainers.properties'), 'utf8')).toBe('');
  });
});
