// Attack: the bundled action keeps the embedded engine's PostgreSQL binaries in the runner's tool
// cache and reuses an entry there when its integrity file names the pinned integrity, which is no
// secret (package-lock.json). The tool cache belongs to the runner's user, the agent's own uid as a
// normal user: an agent that plants an entry (or rewrites `initdb` in one) has a later run on the
// runner (a later job on a self-hosted runner, a later step of the job) execute its code as the
// harness, outside every namespace. The agent can neither plant nor change one.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { platformKey, TOOL_NAME } from '../../src/sandbox/embedded-download.js';
import { EMBEDDED_POSTGRES_PINS } from '../../src/sandbox/embedded-pins.js';
import { AS_ROOT, NobodysDemoRepo } from '../helpers/as-nobody.js';

const demo = new NobodysDemoRepo('sg-tool-cache-');
const toolCache = join(demo.top, 'toolcache');
const runnerTemp = join(demo.top, 'runner-temp');
const attemptsFile = join(demo.top, 'attempts.log');
const key = platformKey();
const pin = EMBEDDED_POSTGRES_PINS[key];
const entry = join(toolCache, TOOL_NAME, pin.version, key);

// What the agent leaves for the next run: an entry tc.find() accepts, whose initdb is its own.
const HOSTILE = `import { appendFileSync, chmodSync, mkdirSync, writeFileSync } from 'node:fs';
const entry = ${JSON.stringify(entry)};
try {
  mkdirSync(entry + '/native/bin', { recursive: true });
  for (const bin of ['initdb', 'postgres']) {
    writeFileSync(entry + '/native/bin/' + bin, '#!/bin/sh\\necho planted > ${demo.top}/planted-ran\\n');
    chmodSync(entry + '/native/bin/' + bin, 0o755);
  }
  writeFileSync(entry + '/.stategate-integrity', ${JSON.stringify(pin.integrity)});
  writeFileSync(entry + '.complete', '');
  appendFileSync(${JSON.stringify(attemptsFile)}, 'plant ok\\n');
} catch (e) {
  appendFileSync(${JSON.stringify(attemptsFile)}, 'plant ' + e.code + '\\n');
}
await import('./examples/refund-agent/agent.mjs');
`;

describe('the agent plants PostgreSQL binaries in the runner tool cache', () => {
  it.runIf(AS_ROOT && pin !== undefined)(
    'cannot: a later run finds no entry of the agent',
    { timeout: 600_000 },
    async () => {
      demo.init([toolCache, runnerTemp]);
      demo.commit('v1.2.4', 'base');
      demo.commit('v1.3.0', 'hostile', { files: { 'hostile.mjs': HOSTILE }, agent: 'hostile.mjs' });

      const run = await demo.compare(
        'hostile',
        {},
        { RUNNER_TOOL_CACHE: toolCache, RUNNER_TEMP: runnerTemp },
      );
      expect(run.code, run.stderr).toBe(0);
      const attempts = readFileSync(attemptsFile, 'utf8').trim().split('\n');
      expect(attempts.length).toBeGreaterThan(0);
      expect(attempts.filter((a) => a.endsWith(' ok'))).toEqual([]);
      // What binariesFromToolCache() would run (tc.find needs the marker and the folder).
      expect(existsSync(`${entry}.complete`) || existsSync(join(entry, 'native', 'bin', 'initdb'))).toBe(
        false,
      );
    },
  );
});
