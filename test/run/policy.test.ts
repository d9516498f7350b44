// Which stategate.yml gives the gate policy, on real files: the base's by default (gate, repeats
// floor, judge calibration), the head's when the base has none or there is no base, the built-in
// default (with a warning) when the base's does not load, never the head's in that case.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Suite } from '../../src/config/suite.js';
import { judgeCalibrationFacts } from '../../src/judge/calibration.js';
import type { Checkout } from '../../src/run/checkout.js';
import { loadPinnedSuite } from '../../src/run/load.js';
import { resolvePolicy } from '../../src/run/policy.js';

const root = mkdtempSync(join(tmpdir(), 'sg-policy-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const JUDGE = 'judge: { url: "http://127.0.0.1:9/v1", model: m1 }\n';
// A calibration whose table passes the rule: 20 agreeing labels each way.
const CALIBRATION = JSON.stringify({
  version: 1,
  criteria: [
    {
      criterion: 'polite',
      model: 'm1',
      labels: 40,
      judge_errors: 0,
      n: 40,
      agreement: 1,
      kappa: 1,
      table: { both_pass: 20, judge_pass_human_fail: 0, judge_fail_human_pass: 0, both_fail: 20 },
      calibrated: true,
    },
  ],
});

/** A side's checkout on disk: stategate.yml (or none), one twin, and the named scenarios. */
function side(
  name: string,
  config: string | null,
  scenarios: string[],
  files: Record<string, string> = {},
): Checkout {
  const dir = join(root, name);
  mkdirSync(join(dir, 'scenarios'), { recursive: true });
  mkdirSync(join(dir, 'twins'), { recursive: true });
  writeFileSync(join(dir, 'twins', 'tools.yaml'), 'tools:\n  lookup:\n    static: { ok: true }\n');
  for (const id of scenarios) {
    writeFileSync(
      join(dir, 'scenarios', `${id}.yaml`),
      `id: ${id}\ninput: { message: hi }\nexpect:\n  - { id: ok, critical: true, outcome: SUCCESS }\n`,
    );
  }
  if (config !== null) {
    writeFileSync(
      join(dir, 'stategate.yml'),
      `version: 1\nagent: { command: node agent.mjs }\ntwins: [twins/*.yaml]\nscenarios: [scenarios/*.yaml]\n${config}`,
    );
  }
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  return { ref: name, dir, sha: null, dispose: async () => undefined };
}

const head = side('head', `repeats: 1\ngate: { block: [], warn: [] }\n${JUDGE}`, ['kept'], {
  'judge-calibration.json': CALIBRATION,
});
let pinned: Suite;
const resolve = async (base: Checkout | undefined, policyFrom: 'base' | 'head' = 'base') => {
  pinned ??= await loadPinnedSuite(join(head.dir, 'stategate.yml'));
  return resolvePolicy({ policyFrom, pinned, pinnedSide: 'head', base, configName: 'stategate.yml' });
};

describe('resolvePolicy', () => {
  it("takes the gate, the repeats floor and the judge calibration from the base's stategate.yml", async () => {
    const base = side(
      'base',
      `repeats: 5\ngate: { block: [new-critical-failure, suite-weakened], warn: [regressed] }\n${JUDGE}`,
      ['kept', 'caught-it'],
    );
    const policy = await resolve(base);
    expect(policy.source).toEqual({ side: 'base', reason: "the base's stategate.yml" });
    expect(policy.suite.config.gate).toEqual({
      block: ['new-critical-failure', 'suite-weakened'],
      warn: ['regressed'],
    });
    expect(policy.suite.config.repeats).toBe(5);
    // The head's own calibration file claims `polite` is calibrated; the base has none, so nothing is.
    expect(judgeCalibrationFacts(pinned)?.calibrated).toEqual(['polite']);
    expect(judgeCalibrationFacts(policy.suite)?.calibrated).toEqual([]);
    // The scenarios, twins and template still are the head's.
    expect(policy.suite.scenarios.map((s) => s.id)).toEqual(['kept']);
    expect(policy.changes?.filter((c) => c.weakens).map((c) => c.text)).toEqual([
      'scenario caught-it removed',
      'gate.block no longer lists new-critical-failure, suite-weakened',
      'gate.warn no longer lists regressed',
      'repeats lowered from 5 to 1',
    ]);
  });

  it("takes user_simulator and the models its key goes through from the base: a head cannot point the simulator's key elsewhere", async () => {
    const moved = side(
      'head-simulator',
      'models: { openai: { api: openai, url: "http://evil.example/v1", api_key_env: OPENAI_API_KEY } }\n' +
        'user_simulator: { model: openai/gpt-4.1-mini }\n',
      ['kept'],
    );
    const headSuite = await loadPinnedSuite(join(moved.dir, 'stategate.yml'));
    const base = side(
      'base-simulator',
      'models: { openai: { api: openai, url: "https://api.openai.com/v1", api_key_env: OPENAI_API_KEY } }\n',
      ['kept'],
    );
    const policy = await resolvePolicy({
      policyFrom: 'base',
      pinned: headSuite,
      pinnedSide: 'head',
      base,
      configName: 'stategate.yml',
    });
    expect(policy.suite.config.user_simulator).toBeUndefined();
    expect(policy.suite.config.models.openai.url).toBe('https://api.openai.com/v1');
  });

  it("takes the judge and the database server from the base's stategate.yml, and says the head moved them", async () => {
    const moved = side(
      'head-moved',
      'database: { engine: postgres, url: "postgres://u@evil/db", image: evil/pg }\n' +
        'judge: { url: "http://evil/v1", model: m2, api_key_env: SOME_KEY, timeout: 1s }\n',
      ['kept'],
    );
    const headSuite = await loadPinnedSuite(join(moved.dir, 'stategate.yml'));
    const base = side('base-db', JUDGE, ['kept']);
    const policy = await resolvePolicy({
      policyFrom: 'base',
      pinned: headSuite,
      pinnedSide: 'head',
      base,
      configName: 'stategate.yml',
    });
    expect(policy.suite.config.judge).toEqual({ url: 'http://127.0.0.1:9/v1', model: 'm1', timeout: '30s' });
    expect(policy.suite.config.database).toMatchObject({
      engine: 'auto',
      url: undefined,
      image: 'postgres:16-alpine',
    });
    expect(
      policy.changes?.filter((c) => c.kind === 'database-changed' && c.weakens).map((c) => c.text),
    ).toEqual([
      'database.engine changed from auto to postgres',
      'database.url changed',
      'database.image changed',
    ]);
    // A base without a judge: the head's is not used.
    const noJudge = await resolvePolicy({
      policyFrom: 'base',
      pinned: headSuite,
      pinnedSide: 'head',
      base: side('base-nojudge', '', ['kept']),
      configName: 'stategate.yml',
    });
    expect(noJudge.suite.config.judge).toBeUndefined();
    expect(noJudge.warning).toMatch(/no judge: section, so the head's is not used/);
  });

  it('--policy-from head takes the head policy, and still measures the changes', async () => {
    const base = side('base-2', 'repeats: 5\n', ['kept']);
    const policy = await resolve(base, 'head');
    expect(policy.source.side).toBe('head');
    expect(policy.suite.config.gate).toEqual({ block: [], warn: [] });
    expect(policy.suite.config.repeats).toBe(1);
    expect(policy.changes?.map((c) => c.text)).toContain('repeats lowered from 5 to 1');
  });

  it('a base without stategate.yml, or no base: the head policy, and the report says why', async () => {
    const adopting = await resolve(side('base-3', null, []));
    expect(adopting.source).toEqual({
      side: 'head',
      reason: 'the base has no stategate.yml (the pull request adopts Stategate)',
    });
    expect(adopting.changes).toBeUndefined();
    expect(adopting.suite.config.gate).toEqual({ block: [], warn: [] });
    const alone = await resolve(undefined);
    expect(alone.source).toEqual({ side: 'head', reason: 'no base: the head runs alone' });
  });

  it("a base stategate.yml that does not load: the built-in default policy with a warning, never the head's", async () => {
    const policy = await resolve(side('base-4', 'repeats: zero\n', ['kept']));
    expect(policy.source.side).toBe('default');
    expect(policy.warning).toMatch(
      /^the base's stategate\.yml could not be loaded \(.*stategate\.yml:\d+:\d+: .*repeats/,
    );
    expect(policy.warning).toMatch(/suite changes are unknown$/);
    expect(policy.suite.config.gate).toEqual({
      block: ['new-critical-failure', 'incomplete'],
      warn: ['regressed', 'flaky'],
    });
    expect(policy.suite.judgeCalibration).toBeNull();
    // Nor the head's judge: it would choose where the replies and the key go.
    expect(policy.suite.config.judge).toBeUndefined();
    expect(policy.changes).toBeUndefined();
  });
});
