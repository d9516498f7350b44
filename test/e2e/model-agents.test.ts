// LLM agents end to end through runCompare and the model gateway, against a scripted provider that
// is not a model: the provider sees the real key on every request and the agent never (its own
// /proc/self/environ is searched), cost comes from the records (the agents claim $999), a model
// fault turns a retrying base and a non-retrying head into BLOCK, and both budgets hold.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GradedEpisode } from '../../src/model/episode.js';
import { runCompare } from '../../src/run/pipeline.js';
import { agentNodeModules, agentSharedDir } from '../helpers/agent-dir.js';
import { ROOT } from '../helpers/demo-repo.js';
import { CLAIMED_USD, writeModelSuite } from '../helpers/model-suite.js';
import { type ScriptedProvider, startScriptedProvider } from '../helpers/scripted-provider.js';

const ADMIN_URL = process.env.STATEGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const KEY_ENV = 'SG_TEST_PROVIDER_KEY';
const KEY_TAIL = 'only-the-harness-holds-5f1c9e';
const REAL_KEY = `sk-real-provider-key-${KEY_TAIL}`;
// One scripted call at PRICES: (1000 * 0.4 + 200 * 0.1 + 300 * 1.6) / 1e6 USD.
const CALL_USD = 900 / 1_000_000;

let provider: ScriptedProvider;
let modules: { path: string; copy: string | null };
const dirs: string[] = [];
beforeAll(async () => {
  process.env[KEY_ENV] = REAL_KEY;
  provider = await startScriptedProvider();
  modules = agentNodeModules(ROOT);
  if (modules.copy) dirs.push(modules.copy);
});
afterAll(async () => {
  delete process.env[KEY_ENV];
  await provider?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function episodesOf(out: string): GradedEpisode[] {
  return readFileSync(join(out, 'episodes.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as GradedEpisode);
}

async function compare(base: string, head: string) {
  const out = join(head, '.stategate');
  const result = await runCompare({
    base,
    head,
    repo: head,
    out,
    engine: 'postgres',
    databaseUrl: ADMIN_URL,
  });
  return { ...result, out, episodes: episodesOf(out) };
}

describe('an agent on the official OpenAI Node SDK and one on plain Python HTTP', () => {
  for (const [agent, stream] of [
    ['node', '0'],
    ['node', '1'],
    ['python', '0'],
  ] as const) {
    it(`${agent}${stream === '1' ? ' (streaming)' : ''}: real key on the provider only, recorded cost in the report`, {
      timeout: 240_000,
    }, async () => {
      const proof = agentSharedDir('sg-model-proof-');
      dirs.push(proof);
      const suite = (v: string) => {
        const dir = writeModelSuite({
          agent,
          providerUrl: provider.url,
          keyEnv: KEY_ENV,
          nodeModules: modules.path,
          // The snooper looks for the key's tail, given reversed (so nothing but the key holds the needle).
          env: {
            AGENT_STREAM: stream,
            PROOF_DIR: proof,
            VERSION: v,
            SNOOP: agent === 'node' ? [...KEY_TAIL].reverse().join('') : '',
          },
        });
        dirs.push(dir);
        return dir;
      };
      const before = provider.requests.length;
      const { report, episodes } = await compare(suite('base'), suite('head'));
      expect(report.verdict).toBe('PASS');
      expect(report.cases.map((c) => c.class)).toEqual(['unchanged']);

      // The wire, provider side: every request carried the real key, none an episode key.
      const seen = provider.requests.slice(before);
      expect(seen.length).toBe(4);
      for (const r of seen) {
        expect(r.headers.authorization).toBe(`Bearer ${REAL_KEY}`);
        expect(JSON.stringify(r.headers)).not.toMatch(/sg-episode-/);
      }
      // The agent's side: its environment had an episode key and the gateway's URL, never the real key.
      const environs = readdirSync(proof)
        .filter((f) => f.endsWith('.environ'))
        .map((f) => readFileSync(join(proof, f), 'utf8'));
      expect(environs.length).toBe(4);
      for (const env of environs) {
        expect(env).not.toContain(REAL_KEY);
        expect(env).not.toContain(KEY_ENV);
        expect(env).toMatch(/OPENAI_API_KEY=sg-episode-[0-9a-f]{48}\0/);
        expect(env).toMatch(/OPENAI_BASE_URL=http:\/\/127\.0\.0\.1:\d+\/m\/[0-9a-f]{32}\/openai\/v1\0/);
      }
      // Isolated (namespaces here): no process's environment, no file the agent can read holds the key.
      // As root (this machine) the agent runs in the sandbox; elsewhere only a hint of isolation may exist.
      if (process.getuid?.() === 0) expect(report.agent_isolation?.mode).toBe('namespaces');
      if (agent === 'node' && report.agent_isolation?.mode === 'namespaces') {
        const snoops = readdirSync(proof).filter((f) => f.endsWith('.snoop'));
        expect(snoops.length).toBe(4);
        for (const f of snoops) {
          const { found, files } = JSON.parse(readFileSync(join(proof, f), 'utf8'));
          expect(found).toEqual([]);
          expect(files).toBeGreaterThan(0);
        }
      }
      // Four different episode keys: one per episode.
      expect(new Set(environs.map((e) => /OPENAI_API_KEY=([^\0]+)/.exec(e)?.[1])).size).toBe(4);

      for (const e of episodes) {
        expect(e.record.modelCalls).toHaveLength(1);
        expect(e.record.modelCalls![0]).toMatchObject({
          provider: 'openai',
          status: 200,
          stream: stream === '1',
        });
        expect(e.record.modelCalls![0].costUsd).toBeCloseTo(CALL_USD, 12);
      }
      // Cost in the report is the recorded one, never the $999 each agent claimed.
      const head = report.cases[0].head!;
      expect(head.metrics?.costUsd).toBeCloseTo(2 * CALL_USD, 9);
      expect(head.metrics?.inputTokens).toBe(2 * 1200);
      expect(head.metrics?.outputTokens).toBe(2 * 300);
      expect(head.metrics?.claimed).toBeUndefined();
      expect(JSON.stringify(report)).not.toContain(String(CLAIMED_USD * 2));
    });
  }
});

describe('the defences those tests lean on', () => {
  it('the snooper finds the needle where the agent can read it (so finding nothing means something)', {
    timeout: 120_000,
  }, async () => {
    const proof = agentSharedDir('sg-model-proof-');
    dirs.push(proof);
    const dir = writeModelSuite({
      agent: 'node',
      providerUrl: provider.url,
      keyEnv: KEY_ENV,
      nodeModules: modules.path,
      repeats: 1,
      env: { PROOF_DIR: proof, PLANTED: `planted-${KEY_TAIL}`, SNOOP: [...KEY_TAIL].reverse().join('') },
    });
    dirs.push(dir);
    await compare(dir, dir);
    const snoops = readdirSync(proof).filter((f) => f.endsWith('.snoop'));
    expect(snoops.length).toBe(2);
    for (const f of snoops) {
      const { found } = JSON.parse(readFileSync(join(proof, f), 'utf8')) as { found: string[] };
      expect(found.some((p) => /^\/proc\/\d+\/environ$/.test(p))).toBe(true);
    }
  });

  it("agent.env carrying the provider's key under another name is refused before any agent runs", {
    timeout: 120_000,
  }, async () => {
    const dir = writeModelSuite({
      agent: 'node',
      providerUrl: provider.url,
      keyEnv: KEY_ENV,
      nodeModules: modules.path,
      env: { LEAK: `\${${KEY_ENV}}` },
    });
    dirs.push(dir);
    const before = provider.requests.length;
    await expect(compare(dir, dir)).rejects.toThrow(`LEAK carries the value of ${KEY_ENV}`);
    expect(provider.requests.length).toBe(before);
  });

  it('an api_key_env that is not set stops the run before any agent runs, naming it', {
    timeout: 120_000,
  }, async () => {
    const dir = writeModelSuite({ agent: 'node', providerUrl: provider.url, keyEnv: 'SG_TEST_UNSET_KEY' });
    dirs.push(dir);
    await expect(compare(dir, dir)).rejects.toThrow(
      /models.openai.api_key_env: SG_TEST_UNSET_KEY is not set/,
    );
  });
});

describe('a model fault', () => {
  it('rate_limited on the first call: a base that retries passes, a head that does not is BLOCK', {
    timeout: 240_000,
  }, async () => {
    const faults = [{ model: 'openai', when: { call: 1 }, fault: 'rate_limited', retry_after: 0 }];
    const side = (retries: string) => {
      const dir = writeModelSuite({
        agent: 'node',
        providerUrl: provider.url,
        keyEnv: KEY_ENV,
        nodeModules: modules.path,
        env: { AGENT_RETRIES: retries },
        faults,
      });
      dirs.push(dir);
      return dir;
    };
    const { report, episodes } = await compare(side('2'), side('0'));
    expect(report.cases.map((c) => c.class)).toEqual(['new-critical-failure']);
    expect(report.verdict).toBe('BLOCK');
    const byside = (s: string) => episodes.filter((e) => e.record.side === s);
    for (const e of byside('base'))
      expect(e.record.modelCalls!.map((c) => c.fault ?? c.status)).toEqual(['rate_limited', 200]);
    for (const e of byside('head'))
      expect(e.record.modelCalls!.map((c) => c.fault ?? c.status)).toEqual(['rate_limited']);
    expect(report.cases[0].head?.faults_fired).toEqual([
      { rule: 1, model: 'openai', fault: 'rate_limited', repeats: 2 },
    ]);
  });
});

describe('base policy', () => {
  it('a head that points models.openai.url elsewhere (and raises the budget) sends the key nowhere new', {
    timeout: 240_000,
  }, async () => {
    const elsewhere = await startScriptedProvider();
    try {
      const side = (url: string, budget: { episode_usd: number }) => {
        const dir = writeModelSuite({
          agent: 'node',
          providerUrl: url,
          keyEnv: KEY_ENV,
          nodeModules: modules.path,
          budget,
          repeats: 1,
        });
        dirs.push(dir);
        return dir;
      };
      // The base's budget allows one call per episode; the head's would allow a hundred.
      const base = side(provider.url, { episode_usd: 0.0005 });
      const head = side(elsewhere.url, { episode_usd: 1 });
      const before = provider.requests.length;
      const { report, episodes } = await compare(base, head);
      expect(report.policy_from?.side).toBe('base');
      expect(elsewhere.requests).toEqual([]);
      expect(provider.requests.length - before).toBe(2);
      for (const r of provider.requests.slice(before))
        expect(r.headers.authorization).toBe(`Bearer ${REAL_KEY}`);
      expect(report.model_spend?.episode_usd).toBe(0.0005);
      expect(episodes.every((e) => e.record.modelCalls?.length === 1)).toBe(true);
    } finally {
      await elsewhere.close();
    }
  });
});

describe('budgets', () => {
  it('budget.run_usd: past it no episode starts, the cases left are incomplete, the report says so', {
    timeout: 240_000,
  }, async () => {
    // Each episode costs 0.0009: after two the run's budget of 0.0015 is spent.
    const side = () => {
      const dir = writeModelSuite({
        agent: 'node',
        providerUrl: provider.url,
        keyEnv: KEY_ENV,
        nodeModules: modules.path,
        budget: { run_usd: 0.0015 },
        repeats: 1,
        scenarios: 3,
      });
      dirs.push(dir);
      return dir;
    };
    const before = provider.requests.length;
    const { report, episodes } = await compare(side(), side());
    expect(provider.requests.length - before).toBe(2);
    const cut = episodes.filter((e) => e.record.infraError?.stage === 'budget');
    expect(cut.length).toBe(4);
    expect(cut[0].record.infraError?.message).toMatch(/budget.run_usd \(0.0015 USD\) is spent/);
    expect(report.cases.filter((c) => c.class === 'incomplete').length).toBe(2);
    expect(report.verdict).toBe('BLOCK');
    expect(report.model_spend).toMatchObject({ run_usd: 0.0015, episodes_cut: 4 });
    expect(report.model_spend?.agent_usd).toBeCloseTo(2 * CALL_USD, 9);
  });
});
