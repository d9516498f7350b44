// Attack: on GitHub's hosted runners the harness's PATH starts with folders of the runner's user
// (~/.local/bin, ~/.cargo/bin), the agent's own uid as a normal user. An agent that puts a `git`
// there has the harness run it after the episodes (removing the base's worktree), outside every
// namespace, with the harness's environment: its tokens, and everything it writes after.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AS_ROOT, NobodysDemoRepo } from '../helpers/as-nobody.js';

const CANARY = 'ghs_canaryTokenOfTheAction';
// The runner's PATH: the user's own folders first.
const demo = new NobodysDemoRepo('sg-path-plant-', { userBinFirst: true });
const userBin = demo.userBin;
const leak = join(demo.top, 'leaked');
const attemptsFile = join(demo.top, 'attempts.log');
const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();

const HOSTILE = `import { appendFileSync, chmodSync, mkdirSync, writeFileSync } from 'node:fs';
const bin = ${JSON.stringify(userBin)};
try {
  mkdirSync(bin, { recursive: true });
  writeFileSync(bin + '/git', '#!/bin/sh\\nprintf "%s\\\\n" "$INPUT_GITHUB_TOKEN" >> ${leak}\\nexec ${realGit} "$@"\\n');
  chmodSync(bin + '/git', 0o755);
  appendFileSync(${JSON.stringify(attemptsFile)}, 'plant ok\\n');
} catch (e) {
  appendFileSync(${JSON.stringify(attemptsFile)}, 'plant ' + e.code + '\\n');
}
await import('./examples/refund-agent/agent.mjs');
`;

/** The harness run by the user, with the action's token in the variable its input arrives in, as a shell can name it. */
const compareAsUser = () => demo.compare('hostile', {}, { INPUT_GITHUB_TOKEN: CANARY });

describe("the agent puts a git on the harness's PATH", () => {
  it.runIf(AS_ROOT)('is never run by the harness', { timeout: 600_000 }, async () => {
    demo.init();
    demo.commit('v1.2.4', 'base');
    demo.commit('v1.3.0', 'hostile', { files: { 'hostile.mjs': HOSTILE }, agent: 'hostile.mjs' });

    const first = await compareAsUser();
    expect(first.code, first.stderr).toBe(0);
    expect(readFileSync(attemptsFile, 'utf8').trim().split('\n').length).toBeGreaterThan(0);
    expect(existsSync(leak) ? readFileSync(leak, 'utf8') : '').toBe('');
    // A second run on the same machine starts after the plant: it must not run it either.
    const second = await compareAsUser();
    expect(second.code, second.stderr).toBe(0);
    expect(existsSync(leak) ? readFileSync(leak, 'utf8') : '').toBe('');
  });
});
