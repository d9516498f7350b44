// Failure signatures and cost per success, per case and per side, in report.json and the renderings.
import { describe, expect, it } from 'vitest';
import { compareSuite } from '../../src/compare/suite.js';
import { renderMarkdown } from '../../src/report/markdown.js';
import { renderTerminal } from '../../src/report/terminal.js';
import { call, repeats, scenario } from '../compare/builders.js';
import { renderHtml, textOutsideCode } from '../helpers/commonmark.js';

const facts = {
  pin: { suite_hash: 'a'.repeat(64), template_hash: 'b'.repeat(64), scenarios: {} },
  sides: { base: { ref: 'main', sha: null }, head: { ref: 'pr', sha: null } },
  engine: 'postgres' as const,
};

const refund = scenario('refund', [{ id: 'refunded_once', critical: true }]);
const lookup = scenario('lookup', [{ id: 'looked_up' }]);
const write = () => [call('issue_refund', {}, { mutated: true })];

function report() {
  return compareSuite({
    ...facts,
    cases: [
      {
        scenario: refund,
        base: repeats(refund, 'base', [
          { usage: { cost_usd: 0.01 }, calls: write() },
          { usage: { cost_usd: 0.01 }, calls: write() },
          { usage: { cost_usd: 0.01 }, calls: write() },
        ]),
        head: repeats(refund, 'head', [
          { usage: { cost_usd: 0.02 }, calls: write() },
          {
            usage: { cost_usd: 0.03 },
            calls: write(),
            verdicts: { refunded_once: 'fail' },
            labels: { refunded_once: 'DUPLICATE_EFFECT' },
          },
          { usage: { cost_usd: 0.01 }, calls: write(), verdicts: { refunded_once: 'fail' } },
        ]),
      },
      {
        scenario: lookup,
        base: repeats(lookup, 'base', [{ usage: { cost_usd: 0.01 } }, { usage: { cost_usd: 0.01 } }]),
        head: repeats(lookup, 'head', [{ usage: { cost_usd: 0.005 } }, { usage: { cost_usd: 0.005 } }]),
      },
    ],
  });
}

describe('failure signatures in the report', () => {
  it('counts each failed repeat under its first matching signature, per case and per side', () => {
    const r = report();
    const head = r.cases.find((c) => c.id === 'refund')!.head!;
    expect(head.signatures).toEqual({ 'duplicate-effect': 1, 'wrong-state-update': 1 });
    expect(r.cases.find((c) => c.id === 'refund')!.base!.signatures).toEqual({});
    expect(r.signatures).toEqual({ base: {}, head: { 'duplicate-effect': 1, 'wrong-state-update': 1 } });
  });

  it('shows the distribution in the markdown and the terminal', () => {
    const r = report();
    const md = renderMarkdown(r);
    expect(md).toContain('head failures by signature: duplicate-effect 1, wrong-state-update 1');
    expect(md).toContain('**Failures head:** duplicate-effect 1, wrong-state-update 1');
    expect(renderTerminal(r)).toContain(
      'head failures by signature: duplicate-effect 1, wrong-state-update 1',
    );
  });
});

describe('cost per success', () => {
  it('divides the cost of all repeats by the passing repeats, and by the dependable cases', () => {
    const r = report();
    const refundHead = r.cases.find((c) => c.id === 'refund')!.head!.cost!;
    expect(refundHead.total_usd).toBeCloseTo(0.06, 9);
    expect(refundHead.successful_episodes).toBe(1);
    expect(refundHead.per_successful_episode).toBeCloseTo(0.06, 9);
    // Failed in some repeat: not a dependable case, so no cost per dependable case.
    expect(refundHead.per_dependable_case).toBeNull();
    const refundBase = r.cases.find((c) => c.id === 'refund')!.base!.cost!;
    expect(refundBase.per_successful_episode).toBeCloseTo(0.01, 9);
    expect(refundBase.per_dependable_case).toBeCloseTo(0.03, 9);

    expect(r.cost?.base).toEqual({
      cases: 2,
      total_usd: 0.05,
      successful_episodes: 5,
      dependable_cases: 2,
      per_successful_episode: 0.01,
      per_dependable_case: 0.025,
    });
    expect(r.cost?.head).toEqual({
      cases: 2,
      total_usd: 0.07,
      successful_episodes: 3,
      dependable_cases: 1,
      per_successful_episode: 0.023333,
      per_dependable_case: 0.07,
    });
  });

  it('names the definition beside each number in the renderings', () => {
    // As the reviewer reads it: the markdown escapes each `$` so no pair of them opens math.
    const md = textOutsideCode(renderHtml(renderMarkdown(report())));
    expect(md).toContain(
      'head cost: $0.0233 per successful episode (total cost / passing repeats), $0.0700 per dependable case (total cost / cases passed in every repeat)',
    );
  });

  it('leaves the cost out when the agent reported none', () => {
    const r = compareSuite({
      ...facts,
      cases: [{ scenario: lookup, base: repeats(lookup, 'base', [{}]), head: repeats(lookup, 'head', [{}]) }],
    });
    expect(r.cases[0].head!.cost).toBeUndefined();
    expect(r.cost).toEqual({});
    expect(renderMarkdown(r)).not.toContain('per successful episode');
  });
});

describe('pass@k and pass^k for the k the user asks for', () => {
  it('reads pass_k from stategate.yml and reports those k, hand-computed', async () => {
    const { StategateConfig } = await import('../../src/config/schema.js');
    const config = StategateConfig.parse({ version: 1, agent: { command: 'node a.mjs' }, pass_k: [1, 2] });
    expect(config.pass_k).toEqual([1, 2]);
    expect(() =>
      StategateConfig.parse({ version: 1, agent: { command: 'node a.mjs' }, pass_k: [0] }),
    ).toThrow();
    // head: 1 of 3 repeats passed. pass@2 = 1 - C(2,2)/C(3,2) = 1 - 1/3; pass^2 = C(1,2)/C(3,2) = 0.
    const failed = { verdicts: { refunded_once: 'fail' as const } };
    const r = compareSuite({
      ...facts,
      ks: config.pass_k,
      cases: [
        {
          scenario: refund,
          base: repeats(refund, 'base', [{}, {}, {}]),
          head: repeats(refund, 'head', [{}, failed, failed]),
        },
      ],
    });
    const head = r.cases[0].head!.stats!;
    expect(Object.keys(head.pass_at_k)).toEqual(['1', '2']);
    expect(head.pass_at_k['2']).toBeCloseTo(2 / 3, 12);
    expect(head.pass_hat_k['2']).toBe(0);
    expect(renderMarkdown(r)).toContain('pass@2 67%, pass^2 0%');
  });
});
