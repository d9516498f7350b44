import { describe, expect, it } from 'vitest';
import { compareCase } from '../../src/compare/case.js';
import type { Scenario } from '../../src/config/schema.js';
import type { GradedEpisode } from '../../src/model/episode.js';
import { type EpisodeSpec, passing, repeats, scenario } from './builders.js';

const s = scenario('refund-timeout', [
  { id: 'refunded-once', critical: true },
  { id: 'policy-first', critical: false },
  { id: 'reply-polite', critical: false },
]);
const fail = (...ids: string[]): EpisodeSpec => ({
  verdicts: Object.fromEntries(ids.map((id) => [id, 'fail'])),
});
const err = (id: string): EpisodeSpec => ({
  verdicts: { [id]: 'error' },
  messages: { [id]: 'judge timed out after 30s' },
});
const ok: EpisodeSpec = {};

/** The classification of one case as compare makes it: class, flaky flags, reason and changed expectations. */
function classifyCase(sc: Scenario, base: readonly GradedEpisode[] | null, head: readonly GradedEpisode[]) {
  const c = compareCase(sc, base, head);
  return {
    class: c.class,
    flaky: c.flaky,
    reason: c.reason ?? '',
    expectations_changed: c.expectations_changed ?? [],
  };
}

describe('classifyCase: the five classes', () => {
  it('unchanged: both sides pass every repeat', () => {
    const c = classifyCase(s, passing(s, 'base', 5), passing(s, 'head', 5));
    expect(c).toEqual({
      class: 'unchanged',
      flaky: { base: false, head: false },
      reason: 'Both sides passed every expectation in every repeat (base 5, head 5).',
      expectations_changed: [],
    });
  });

  it('new-critical-failure: a critical expectation failed in one head repeat and passed in every base repeat', () => {
    const c = classifyCase(
      s,
      passing(s, 'base', 5),
      repeats(s, 'head', [ok, ok, fail('refunded-once'), ok, ok]),
    );
    expect(c.class).toBe('new-critical-failure');
    expect(c.reason).toBe(
      'Critical expectation refunded-once failed in 1 of 5 head repeats and passed in all 5 base repeats.',
    );
    expect(c.expectations_changed).toEqual([
      {
        id: 'refunded-once',
        critical: true,
        change: 'broke',
        label: 'STATE_MISMATCH',
        base: { pass: 5, fail: 0, error: 0 },
        head: { pass: 4, fail: 1, error: 0 },
        message: 'refunded-once: fail',
      },
    ]);
  });

  it('new-critical-failure: the implicit completed expectation counts as critical', () => {
    const c = classifyCase(s, passing(s, 'base', 3), repeats(s, 'head', [fail('completed'), ok, ok]));
    expect(c.class).toBe('new-critical-failure');
    expect(c.expectations_changed[0]).toMatchObject({ id: 'completed', critical: true, change: 'broke' });
  });

  it('regressed: a non-critical expectation did the same', () => {
    const c = classifyCase(
      s,
      passing(s, 'base', 5),
      repeats(s, 'head', [fail('policy-first'), fail('policy-first'), ok, ok, ok]),
    );
    expect(c.class).toBe('regressed');
    expect(c.reason).toBe(
      'Expectation policy-first failed in 2 of 5 head repeats and passed in all 5 base repeats.',
    );
  });

  it('improved: an expectation that failed in some base repeat passes in every head repeat', () => {
    const c = classifyCase(s, repeats(s, 'base', [fail('refunded-once'), ok, ok]), passing(s, 'head', 3));
    expect(c.class).toBe('improved');
    expect(c.reason).toBe(
      'Expectation refunded-once failed in 1 of 3 base repeats and passed in all 3 head repeats.',
    );
    expect(c.expectations_changed).toEqual([
      expect.objectContaining({ id: 'refunded-once', change: 'fixed', base: { pass: 2, fail: 1, error: 0 } }),
    ]);
  });

  it('incomplete: an expectation could not be evaluated on either side', () => {
    const c = classifyCase(s, repeats(s, 'base', [ok, err('reply-polite')]), passing(s, 'head', 2));
    expect(c.class).toBe('incomplete');
    expect(c.reason).toBe(
      '1 of 2 base repeats could not be graded (reply-polite: judge timed out after 30s).',
    );
    expect(c.expectations_changed).toEqual([
      expect.objectContaining({ id: 'reply-polite', change: 'error', base: { pass: 1, fail: 0, error: 1 } }),
    ]);
  });

  it('incomplete: an infrastructure error, or a side with no episodes', () => {
    const gateway = classifyCase(
      s,
      passing(s, 'base', 2),
      repeats(s, 'head', [{ infraError: { stage: 'gateway', message: 'port closed' } }, ok]),
    );
    expect(gateway.class).toBe('incomplete');
    expect(gateway.reason).toBe('1 of 2 head repeats could not be graded (gateway: port closed).');
    const empty = classifyCase(s, passing(s, 'base', 2), []);
    expect(empty.class).toBe('incomplete');
    expect(empty.reason).toBe('The head has no episodes of this scenario.');
    expect(classifyCase(s, [], passing(s, 'head', 2)).class).toBe('incomplete');
    const long = classifyCase(
      s,
      passing(s, 'base', 1),
      repeats(s, 'head', [{ infraError: { stage: 'sandbox', message: 'x'.repeat(500) } }]),
    );
    expect(long.reason.length).toBeLessThan(300);
    expect(long.reason).toMatch(/^1 of 1 head repeats could not be graded \(sandbox: x+…\)\.$/);
  });
});

describe('classifyCase: first match wins', () => {
  it('incomplete beats a new critical failure: base errored, head failed', () => {
    const c = classifyCase(
      s,
      repeats(s, 'base', [err('refunded-once'), ok]),
      repeats(s, 'head', [fail('refunded-once'), fail('refunded-once')]),
    );
    expect(c.class).toBe('incomplete');
  });

  it('a break in the graded head repeats beats incomplete', () => {
    const c = classifyCase(
      s,
      passing(s, 'base', 2),
      repeats(s, 'head', [
        { verdicts: { 'refunded-once': 'fail', 'policy-first': 'error' } },
        { infraError: { stage: 'sandbox', message: 'x' } },
      ]),
    );
    expect(c.class).toBe('new-critical-failure');
    expect(c.reason).toBe(
      'Critical expectation refunded-once failed in 1 of 2 head repeats and passed in all 2 base repeats. 2 of 2 head repeats could not be graded (policy-first: policy-first: error).',
    );
  });

  it('an expectation only the head could not evaluate, which the base passed cleanly, is the head failing it', () => {
    const critical = classifyCase(s, passing(s, 'base', 2), repeats(s, 'head', [err('refunded-once'), ok]));
    expect(critical.class).toBe('new-critical-failure');
    expect(critical.reason).toBe(
      'Critical expectation refunded-once could not be evaluated on what the head left in 1 of 2 head repeats (judge timed out after 30s) and passed in all 2 base repeats.',
    );
    const other = classifyCase(s, passing(s, 'base', 2), repeats(s, 'head', [err('policy-first'), ok]));
    expect(other.class).toBe('regressed');
    // The base could not evaluate it either, or the harness stopped the head's repeat: incomplete.
    const both = classifyCase(
      s,
      repeats(s, 'base', [err('refunded-once'), ok]),
      repeats(s, 'head', [err('refunded-once'), ok]),
    );
    expect(both.class).toBe('incomplete');
    // As the grader records it, a repeat the harness stopped errors every expectation.
    const allErrors = Object.fromEntries(
      ['completed', ...s.expect.map((e) => e.id)].map((id) => [id, 'error' as const]),
    );
    const halted: EpisodeSpec = { infraError: { stage: 'sandbox', message: 'x' }, verdicts: allErrors };
    const stopped = classifyCase(s, passing(s, 'base', 2), repeats(s, 'head', [halted, ok]));
    expect(stopped.class).toBe('incomplete');
    expect(
      classifyCase(s, passing(s, 'base', 3), repeats(s, 'head', [halted, err('refunded-once'), ok])).class,
    ).toBe('new-critical-failure');
  });

  it('a new critical failure beats a regression', () => {
    const c = classifyCase(
      s,
      passing(s, 'base', 2),
      repeats(s, 'head', [fail('policy-first'), fail('refunded-once')]),
    );
    expect(c.class).toBe('new-critical-failure');
    expect(c.reason).toBe(
      'Critical expectation refunded-once failed in 1 of 2 head repeats and passed in all 2 base repeats; 1 more expectation broke.',
    );
    expect(c.expectations_changed.map((e) => [e.id, e.change])).toEqual([
      ['refunded-once', 'broke'],
      ['policy-first', 'broke'],
    ]);
  });

  it('a regression beats an improvement', () => {
    const c = classifyCase(
      s,
      repeats(s, 'base', [fail('reply-polite'), ok]),
      repeats(s, 'head', [fail('policy-first'), ok]),
    );
    expect(c.class).toBe('regressed');
    expect(c.expectations_changed.map((e) => [e.id, e.change])).toEqual([
      ['policy-first', 'broke'],
      ['reply-polite', 'fixed'],
    ]);
  });

  it('a critical expectation failing on both sides is not new: unchanged', () => {
    const c = classifyCase(
      s,
      repeats(s, 'base', [fail('refunded-once'), ok]),
      repeats(s, 'head', [fail('refunded-once'), fail('refunded-once')]),
    );
    expect(c.class).toBe('unchanged');
    expect(c.reason).toBe(
      'No expectation broke or was fixed; the base passed 1 of 2 repeats, the head 0 of 2.',
    );
  });
});

describe('classifyCase: flaky beside any class', () => {
  it('marks a side whose repeats disagree', () => {
    const c = classifyCase(s, passing(s, 'base', 3), repeats(s, 'head', [fail('refunded-once'), ok, ok]));
    expect(c.class).toBe('new-critical-failure');
    expect(c.flaky).toEqual({ base: false, head: true });
  });

  it('with improved and unchanged too', () => {
    expect(
      classifyCase(s, repeats(s, 'base', [fail('policy-first'), ok]), passing(s, 'head', 2)).flaky,
    ).toEqual({ base: true, head: false });
    const both = classifyCase(
      s,
      repeats(s, 'base', [fail('reply-polite'), ok]),
      repeats(s, 'head', [ok, fail('reply-polite')]),
    );
    expect(both.class).toBe('unchanged');
    expect(both.flaky).toEqual({ base: true, head: true });
  });

  it('counting only the repeats that could be graded', () => {
    // A break in the graded repeats is a regression whatever else could not be graded.
    const c = classifyCase(
      s,
      passing(s, 'base', 3),
      repeats(s, 'head', [{ infraError: { stage: 'sandbox', message: 'x' } }, ok, fail('policy-first')]),
    );
    expect(c.class).toBe('regressed');
    expect(c.flaky.head).toBe(true);
    const onlyErrors = classifyCase(
      s,
      passing(s, 'base', 2),
      repeats(s, 'head', [{ infraError: { stage: 'sandbox', message: 'x' } }, ok]),
    );
    expect(onlyErrors.flaky.head).toBe(false);
  });

  it('a side that fails every repeat is not flaky', () => {
    expect(
      classifyCase(s, passing(s, 'base', 2), repeats(s, 'head', [fail('policy-first'), fail('reply-polite')]))
        .flaky.head,
    ).toBe(false);
  });
});

describe('classifyCase: a case without a base side', () => {
  it('is classified by the head alone and says it is new', () => {
    const critical = classifyCase(s, null, repeats(s, 'head', [fail('refunded-once'), ok]));
    expect(critical.class).toBe('new-critical-failure');
    expect(critical.reason).toBe(
      'New scenario (no base run): critical expectation refunded-once failed in 1 of 2 head repeats.',
    );
    expect(critical.expectations_changed[0]).toMatchObject({
      change: 'broke',
      base: { pass: 0, fail: 0, error: 0 },
    });
    expect(classifyCase(s, null, repeats(s, 'head', [fail('policy-first'), ok])).class).toBe('regressed');
    const clean = classifyCase(s, null, passing(s, 'head', 3));
    expect(clean.class).toBe('unchanged');
    expect(clean.reason).toBe('New scenario (no base run): the head passed 3 of 3 repeats.');
    expect(clean.flaky).toEqual({ base: false, head: false });
  });

  it('is still incomplete when the head could not be graded', () => {
    expect(classifyCase(s, null, repeats(s, 'head', [err('refunded-once')])).class).toBe('incomplete');
  });
});
