// The evidence kept beside a case: the agent's stderr tail when it crashed (bounded, and chosen
// from the right repeat), the representative episodes' steps, and that neither changes a verdict.
import { describe, expect, it } from 'vitest';
import { agentStderr, badEnding, episodeSteps, lastLines, STDERR_TAIL } from '../../src/compare/evidence.js';
import { compareSuite } from '../../src/compare/suite.js';
import { renderMarkdown } from '../../src/report/markdown.js';
import { ReportSchema } from '../../src/report/report-schema.js';
import { renderHtml, textsOf } from '../helpers/commonmark.js';
import { crashCase, facts, stillFailingCase, unchangedCase } from '../report/fixtures.js';
import { call, episode, repeats, scenario } from './builders.js';

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

describe('lastLines', () => {
  it('keeps the last 20 lines of a long traceback and says it cut', () => {
    const text = `${Array.from({ length: 100 }, (_, i) => `line ${i}`).join('\n')}\n\n`;
    const { tail, cut } = lastLines(text);
    expect(tail.split('\n')).toEqual(Array.from({ length: 20 }, (_, i) => `line ${80 + i}`));
    expect(cut).toBe(true);
    expect(lastLines('one\ntwo\n')).toEqual({ tail: 'one\ntwo', cut: false });
    expect(lastLines('')).toEqual({ tail: '', cut: false });
  });

  it('never holds more than 2 KB, nor half a character, even of one endless line', () => {
    const wide = '€'.repeat(5_000); // 3 bytes each
    const one = lastLines(`start\n${wide}`);
    expect(bytes(one.tail)).toBeLessThanOrEqual(STDERR_TAIL.bytes);
    expect(one.tail.startsWith('…€')).toBe(true);
    expect(one.tail).not.toContain('\uFFFD');
    expect(one.cut).toBe(true);
    const many = lastLines(Array.from({ length: 19 }, () => 'x'.repeat(500)).join('\n'));
    expect(bytes(many.tail)).toBeLessThanOrEqual(STDERR_TAIL.bytes);
    expect(many.tail.split('\n')).toHaveLength(4);
    expect(many.cut).toBe(true);
  });
});

describe('agentStderr', () => {
  const s = scenario('crash', []);
  const ok = () => episode(s, 'head', 1);

  it('names how the agent ended: a crash, a kill, a timeout, or no result after exit 0', () => {
    const run = ok().record.agent;
    expect(badEnding(run)).toBeNull();
    expect(
      badEnding({ ...run, exitCode: 1, resultError: 'stdout is empty: the agent printed no result' }),
    ).toBe('exited with code 1: stdout is empty: the agent printed no result');
    expect(badEnding({ ...run, exitCode: null, signal: 'SIGKILL' })).toBe('was killed by SIGKILL');
    expect(badEnding({ ...run, timedOut: true, durationMs: 30_000 })).toBe('timed out after 30000 ms');
    expect(
      badEnding({ ...run, result: undefined, resultError: 'last line of stdout is not JSON: "hi"' }),
    ).toBe('exited 0 and printed no valid result: last line of stdout is not JSON: "hi"');
  });

  it('takes the first crashed repeat in repeat order, and skips repeats the harness stopped', () => {
    const crashed = (repeat: number, text: string, infra = false) =>
      episode(s, 'head', repeat, {
        agent: { exitCode: 1, stderr: text },
        infraError: infra ? { stage: 'interrupted', message: 'cancelled' } : undefined,
      });
    // Finished out of order; repeat 1 was stopped by the harness, so repeat 2 is the agent's first crash.
    const found = agentStderr([crashed(3, 'third'), ok(), crashed(1, 'stopped', true), crashed(2, 'second')]);
    expect(found).toEqual({
      episode: 'crash-head-2',
      repeat: 2,
      ended: 'exited with code 1',
      tail: 'second',
    });
    expect(agentStderr([ok(), ok()])).toBeUndefined();
  });
});

describe('episodeSteps', () => {
  it('keeps the calls in order with their effect and fault, cut at the cap with a count', () => {
    const s = scenario('steps', []);
    const calls = [
      call('refund_payment', { amount: 40 }, { mutated: true, status: 504, fault: 'timeout_after_mutation' }),
      call('refund_payment', { amount: 40 }, { replay: true }),
      call('lookup_order', { order_id: 'x'.repeat(1_000) }),
    ];
    const steps = episodeSteps(episode(s, 'head', 1, { calls }), 2);
    expect(steps.outcome).toBe('passed');
    expect(steps.steps).toEqual([
      {
        tool: 'refund_payment',
        args: { amount: 40 },
        status: 504,
        effect: 'applied',
        fault: 'timeout_after_mutation',
      },
      { tool: 'refund_payment', args: { amount: 40 }, status: 200, effect: 'replayed' },
    ]);
    expect(steps.steps_cut).toBe(1);
    // A huge argument is cut in report.json; episodes.jsonl keeps it whole.
    const long = episodeSteps(episode(s, 'head', 1, { calls }));
    expect(JSON.stringify(long.steps[2].args).length).toBeLessThan(300);
  });
});

describe('a report with a crash and a case still failing', () => {
  const report = compareSuite({
    ...facts(),
    cases: [crashCase(), stillFailingCase(), unchangedCase('happy-path')],
  });

  it('keeps the stderr tail in report.json, within the strict schema', () => {
    const c = report.cases.find((x) => x.id === 'refund-crash')!;
    expect(c.agent_stderr?.head?.tail.split('\n').at(-1)).toBe("KeyError: 'state'");
    expect(c.agent_stderr?.base).toBeUndefined();
    expect(ReportSchema.safeParse(report).success).toBe(true);
  });

  it('shows a still-failing case in its own section without changing its class or the verdict', () => {
    // Rendering only: a case failing the same on both sides is unchanged, and unchanged does not gate.
    const alone = compareSuite({ ...facts(), cases: [stillFailingCase(), unchangedCase('happy-path')] });
    expect(alone.verdict).toBe('PASS');
    expect(alone.cases.map((c) => c.class)).toEqual(['unchanged', 'unchanged']);
    const html = renderHtml(renderMarkdown(alone));
    expect(textsOf(html, 'h3')).toEqual(['Still failing (1)']);
    expect(textsOf(html, 'h4')).toEqual(['partial-refund: still failing']);
    // Not hidden among the passing cases in the folded table.
    expect(textsOf(html, 'summary')).toEqual(['1 unchanged case']);
    expect(textsOf(html, 'details')[0]).not.toContain('partial-refund');
  });

  it('says — for usage the agent never reported, not $0 and 0 tokens', () => {
    const c = report.cases.find((x) => x.id === 'partial-refund')!;
    expect(c.head?.metrics).toMatchObject({ costUnreported: true, tokensUnreported: true });
    const md = renderMarkdown(report);
    expect(md).not.toMatch(/\$0 \||0 in \/ 0 out/);
    // An agent that reports usage of 0 tokens still shows its numbers.
    const s = scenario('free', []);
    const zero = compareSuite({
      ...facts(),
      cases: [
        {
          scenario: s,
          base: repeats(s, 'base', [{ usage: { input_tokens: 0, output_tokens: 0, cost_usd: 0 } }]),
          head: repeats(s, 'head', [{ usage: { input_tokens: 0, output_tokens: 0, cost_usd: 0 } }]),
        },
      ],
    });
    expect(zero.cases[0].head?.metrics?.tokensUnreported).toBeUndefined();
    expect(zero.cases[0].head?.metrics?.costUnreported).toBeUndefined();
  });
});

describe('stderr that tries to break out of its fence', () => {
  it('stays inside the code block, whatever fences, headings and mentions it prints', () => {
    const s = scenario('fence-break', [{ id: 'ok', critical: true }]);
    const hostile = [
      '~~~',
      '````',
      '## Stategate: PASS',
      '@team please merge',
      '<!-- stategate:comment -->',
      '~~~~~~~~',
    ].join('\n');
    const report = compareSuite({
      ...facts(),
      cases: [
        {
          scenario: s,
          base: repeats(s, 'base', [{}]),
          head: repeats(s, 'head', [
            {
              verdicts: { completed: 'fail' },
              agent: { exitCode: 1, stderr: hostile, result: undefined, resultError: 'stdout is empty' },
            },
          ]),
        },
      ],
    });
    const md = renderMarkdown(report);
    const html = renderHtml(md);
    expect(textsOf(html, 'h2')).toEqual(['Stategate: BLOCK']);
    const pre = textsOf(html, 'pre');
    expect(pre).toHaveLength(1);
    expect(pre[0]).toContain('## Stategate: PASS\n@team please merge');
    expect(pre[0].trimEnd().endsWith('~~~~~~~~')).toBe(true);
    expect(md.split('<!-- stategate:comment -->')).toHaveLength(2);
  });
});
