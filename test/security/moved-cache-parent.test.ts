// Attack: as a normal user (GitHub's hosted runners) the agent runs as the harness's own uid. The
// harness hides its folders by mounting over their paths when each agent namespace starts, but a
// folder above a hidden one is the user's too: the head's agent.setup renames the folder holding the
// baseline cache and leaves a folder of its own at the old path, with a forged entry in it (base
// episodes that fail, made by running the same base and version anywhere: the key is no secret).
// Later namespaces cover the decoy and leave the real folder open under its new name, and the next
// run reads the decoy: the base "fails" too, so a head that breaks a critical case passes.
import { chmodSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AS_ROOT, NobodysDemoRepo, outcomeOf } from '../helpers/as-nobody.js';
import { BLOCKING_SCENARIO } from '../helpers/demo-repo.js';

const demo = new NobodysDemoRepo('sg-moved-parent-');
const box = join(demo.top, 'box');
const cache = join(box, 'cache');
const attemptsFile = join(demo.top, 'attempts.log');

/** `compare --cache` run by the harness's user, as a normal user runs it. */
const compare = async (head: string, out: string) =>
  outcomeOf(await demo.compare(head, { out: join(demo.repo, '.stategate', out), cache }));

/** The head's agent: as agent.setup it swaps the cache's parent for a decoy; as the agent it looks. */
function hostile(entryName: string, forged: string): string {
  return `import { chmodSync, mkdirSync, readdirSync, renameSync, writeFileSync, appendFileSync } from 'node:fs';
const box = ${JSON.stringify(box)};
const log = (what) => appendFileSync(${JSON.stringify(attemptsFile)}, what + '\\n');
const step = (name, fn) => { try { fn(); log(name + ' ok'); } catch (e) { log(name + ' ' + (e.code ?? e.message)); } };
if (process.argv[2] === 'setup') {
  step('move', () => renameSync(box, box + '.real'));
  step('plant', () => {
    mkdirSync(box + '/cache', { recursive: true });
    writeFileSync(box + '/cache/' + ${JSON.stringify(entryName)}, ${JSON.stringify(forged)});
    chmodSync(box + '/cache', 0o555);
  });
} else {
  step('read-real', () => readdirSync(box + '.real/cache'));
  await import('./examples/refund-agent/agent.mjs');
}
`;
}

describe('the agent moves a folder above a hidden one', () => {
  it.runIf(AS_ROOT)(
    'cannot swap the baseline cache for a forged one, and the next run still blocks',
    { timeout: 900_000 },
    async () => {
      demo.init([box]);
      demo.commit('v1.2.4', 'base');
      demo.commit('v1.3.0', 'honest');

      const first = await compare('honest', 'first');
      expect(first.verdict).toBe('BLOCK');
      expect(first.baseline_cache?.saved).toBe(true);
      const [entryName] = readdirSync(cache);
      const stored = readFileSync(join(cache, entryName), 'utf8');
      // What the attacker prepares offline: the same entry with every base episode failing.
      const entry = JSON.parse(stored);
      for (const list of Object.values(entry.episodes) as {
        passed: boolean;
        results: { verdict: string }[];
      }[][])
        for (const g of list) {
          g.passed = false;
          for (const r of g.results) r.verdict = 'fail';
        }
      demo.commit('v1.3.0', 'hostile', {
        files: { 'hostile.mjs': hostile(entryName, JSON.stringify(entry)) },
        agent: 'hostile.mjs',
        setup: 'node hostile.mjs setup',
      });

      await compare('hostile', 'hostile');
      const attempts = readFileSync(attemptsFile, 'utf8').trim().split('\n');
      expect(attempts).toContain('move EBUSY');
      expect(attempts.filter((a) => a.endsWith(' ok'))).toEqual([]);
      expect(readFileSync(join(cache, entryName), 'utf8')).toBe(stored);

      const next = await compare('honest', 'next');
      expect(next.baseline_cache).toMatchObject({ hit: true });
      expect(next.cases).toEqual([[BLOCKING_SCENARIO, 'new-critical-failure']]);
      expect(next.verdict).toBe('BLOCK');
      chmodSync(demo.top, 0o777);
    },
  );
});
