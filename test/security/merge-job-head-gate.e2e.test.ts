// Attack: docs/action.md's "Sharding over a matrix" workflow on `pull_request`. Each shard job
// reads the gate from the base (policy-from: base, the default) and BLOCKs the head's new critical
// failures. The merge job then `actions/checkout`s the pull request (its merge commit: the HEAD's
// stategate.yml) and `merge` gates with "the stategate.yml in the checkout it runs in". A head that
// empties `gate.block` in its stategate.yml thereby turns the merged verdict from BLOCK into WARN,
// which is exactly what policy-from: base exists to prevent. No workflow file is edited.
import { cpSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentVersion, checkout } from '../action/demo-repo.js';
import { Harness, warnOnlyGate } from '../action/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await Harness.start([agentVersion('1.2.4')], { 'lax-gate': [agentVersion('1.3.0'), warnOnlyGate] });
});
afterAll(() => h?.close());

describe('the merge job gates with the head checkout', () => {
  it('a PR that empties gate.block in its stategate.yml is still blocked by the merged, base-policy shards', async () => {
    const shards: string[] = [];
    for (const i of [1, 2]) {
      const r = await h.step('lax-gate', h.pullRequestEvent(52, 'lax-gate'), { repeats: 1, shard: `${i}/2` });
      expect(r.code, r.stdout + r.stderr).toBe(0);
      shards.push(r.outputs['report-path']);
    }
    // Each shard gated with the base's policy.
    for (const p of shards) expect(JSON.parse(readFileSync(p, 'utf8')).policy_from?.side).toBe('base');
    const blockedInShards = shards.some((p) => JSON.parse(readFileSync(p, 'utf8')).verdict === 'BLOCK');
    expect(blockedInShards).toBe(true);

    // The documented merge job: actions/checkout of the PR (the head's files), then the artifacts.
    const ws = checkout(h.repo, 'lax-gate', join(h.root, 'merge-job'));
    shards.forEach((p, i) => {
      mkdirSync(join(ws, 'reports', `stategate-shard-${i + 1}`), { recursive: true });
      cpSync(p, join(ws, 'reports', `stategate-shard-${i + 1}`, 'report.json'));
    });
    const merged = await h.step(
      'lax-gate',
      h.pullRequestEvent(52, 'lax-gate'),
      { repeats: '', engine: '', merge: 'reports/*/report.json' },
      ws,
    );
    expect(merged.outputs.verdict, merged.stdout + merged.stderr).toBe('BLOCK');
  }, 600_000);
});
