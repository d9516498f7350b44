// The words and numbers every rendering of a report shares (markdown, terminal, JUnit), as plain text.

import { canonicalJson } from '../model/canonical-json.js';
import { type CaseClass, FAILURE_SIGNATURES, NEW_SCENARIO, SIGNATURE_MEANINGS } from '../model/classes.js';
import type {
  CaseReport,
  ChangedExpectation,
  EpisodeSteps,
  GateReason,
  PolicySource,
  Report,
  SideSummary,
  StateDifference,
  SuiteChange,
} from '../model/report.js';
import { filterWords } from '../plan/scenario-filter.js';
import { clip } from './escape.js';

/** Classes from most to least severe: the order cases are read in. */
export const CLASS_ORDER: CaseClass[] = [
  'new-critical-failure',
  'regressed',
  'incomplete',
  'improved',
  'unchanged',
];

/** A class in words: `new critical failure`. */
export function classWords(cls: string): string {
  return cls.replace(/-/g, ' ');
}

/** A share as a whole percentage, `—` when unknown. */
export function percent(x: number | null | undefined): string {
  return x === null || x === undefined ? '—' : `${Math.round(x * 100)}%`;
}

/** A content hash or commit, short. */
export function shortHash(hash: string | null | undefined, length = 12): string {
  return hash ? hash.slice(0, length) : '—';
}

/** A duration: `850 ms`, `1.2 s`, `2.5 min`. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${(ms / 60_000).toFixed(1)} min`;
}

/** A cost in dollars, with precision for small amounts. */
export function dollars(x: number): string {
  return x === 0 ? '$0' : x < 1 ? `$${x.toFixed(4)}` : `$${x.toFixed(2)}`;
}

/** A number with thousands separators, independent of the machine's locale. */
export function count(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** `3 cases`, `1 case`. */
export function plural(n: number, word: string, many = `${word}s`): string {
  return `${count(n)} ${n === 1 ? word : many}`;
}

/** The flaky sides of a case in words, or ''. */
export function flakyWords(c: Pick<CaseReport, 'flaky'>): string {
  const sides = [c.flaky.base ? 'base' : '', c.flaky.head ? 'head' : ''].filter(Boolean);
  return sides.length === 0 ? '' : `flaky ${sides.join(' and ')}`;
}

/** A run of the head alone (`stategate run`): there is no base to be unchanged against. */
export function headOnly(report: Pick<Report, 'sides'>): boolean {
  return report.sides.base === null;
}

/**
 * A case's reason as a rendering shows it: in a head-only run every case lacks a base, so the
 * `New scenario (no base run)` its reason starts with says nothing and is left out.
 */
export function caseReason(report: Pick<Report, 'sides'>, c: CaseReport): string | undefined {
  if (!c.reason || !headOnly(report) || !c.reason.startsWith(NEW_SCENARIO)) return c.reason;
  const rest = c.reason.slice(NEW_SCENARIO.length);
  return rest.charAt(0).toUpperCase() + rest.slice(1);
}

/** What a case is called in a rendering: its class, or in a head-only run pass / fail. */
export function caseLabel(report: Pick<Report, 'sides'>, c: CaseReport): string {
  if (!headOnly(report)) return isStillFailing(c) ? 'still failing' : classWords(c.class);
  if (c.class === 'incomplete') return 'incomplete';
  const h = c.head;
  return h && h.runs > 0 && h.passes === h.runs ? 'pass' : 'fail';
}

/**
 * An unchanged case that fails on every side it has (some repeat of each side failed): nothing the
 * change did, but not a passing case either. Rendering only: the class and the verdict stay.
 */
export function isStillFailing(c: CaseReport): boolean {
  if (c.class !== 'unchanged' || !c.head) return false;
  const failing = (s: SideSummary) => s.runs > 0 && s.passes < s.runs;
  return failing(c.head) && (c.base === null || failing(c.base));
}

/** The expectations a still-failing case fails, one plain line each, with an example failure. */
export function stillFailingWords(
  c: CaseReport,
): { id: string; tags: string; text: string; example?: string }[] {
  const out: { id: string; tags: string; text: string; example?: string }[] = [];
  for (const [id, h] of Object.entries(c.head?.expectations ?? {})) {
    if (h.fail === 0) continue;
    const b = c.base?.expectations[id];
    const base = c.base ? `, ${b?.fail ?? 0} of ${c.base.runs} base repeats` : '';
    const tags = [h.critical ? 'critical' : '', ...Object.keys(h.labels ?? {})].filter(Boolean).join(', ');
    const line: { id: string; tags: string; text: string; example?: string } = {
      id,
      tags,
      text: `failed in ${h.fail} of ${c.head?.runs ?? 0} head repeats${base}`,
    };
    if (h.example) line.example = h.example;
    out.push(line);
  }
  return out;
}

/** The classes cases are grouped by in a rendering: blocking, other changed, still failing, the rest. */
export function groupCases(report: Report): {
  blocking: CaseReport[];
  changed: CaseReport[];
  stillFailing: CaseReport[];
  rest: CaseReport[];
} {
  // The cases the gate's BLOCK reasons name, as the gate decided when the report was assembled.
  const block = new Set(
    (report.gate_reasons ?? []).filter((r) => r.verdict === 'BLOCK').flatMap((r) => r.cases),
  );
  const sorted = [...report.cases].sort(
    (a, b) =>
      CLASS_ORDER.indexOf(a.class) - CLASS_ORDER.indexOf(b.class) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
  const blocking = sorted.filter((c) => block.has(c.id));
  const isBlocking = new Set(blocking);
  const changed = sorted.filter(
    (c) => !isBlocking.has(c) && (c.class !== 'unchanged' || c.flaky.base || c.flaky.head),
  );
  const isChanged = new Set(changed);
  const others = sorted.filter((c) => !isBlocking.has(c) && !isChanged.has(c));
  return {
    blocking,
    changed,
    stillFailing: others.filter(isStillFailing),
    rest: others.filter((c) => !isStillFailing(c)),
  };
}

// A side's statistics are computed when the report is assembled (or read back from a file), never
// here; a side without them shows `—`.

/** The all-N column: `yes, 5 of 5` or `no, 3 of 5`. */
export function allNWords(s: SideSummary): string {
  const stats = s.stats;
  if (!stats) return '—';
  const errors = s.infraErrors ? `, ${s.infraErrors} not graded` : '';
  return `${stats.all_n ? 'yes' : 'no'}, ${s.passes} of ${s.runs}${errors}`;
}

/** The per-run pass rate with its Wilson interval: `60% (23–88%)`. */
export function rateWords(s: SideSummary): string {
  const stats = s.stats;
  if (!stats || stats.pass_rate === null) return '—';
  const w = stats.wilson;
  return w ? `${percent(stats.pass_rate)} (${percent(w.low)}–${percent(w.high)})` : percent(stats.pass_rate);
}

/** What each repeat column means, said once beside the numbers. */
export const REPEAT_DEFINITIONS =
  'all-N: passed every repeat; per-run pass rate: passing / graded repeats, Wilson 95% interval; ' +
  'pass@k: 1 - C(n-c,k)/C(n,k), the chance at least one of k repeats passes (unbiased); ' +
  'pass^k: C(c,k)/C(n,k), the chance k repeats all pass (n graded repeats, c passing)';

/** pass@k and pass^k of a side for each k but 1 (which is the per-run rate): `pass@5 100%, pass^5 40%`. */
export function passKWords(s: SideSummary): string {
  const stats = s.stats;
  if (!stats) return '—';
  const words: string[] = [];
  for (const [k, at] of Object.entries(stats.pass_at_k)) {
    if (k === '1') continue;
    const hat = stats.pass_hat_k[k];
    words.push(
      `pass@${k} ${at === null ? '—' : percent(at)}, pass^${k} ${hat === null ? '—' : percent(hat)}`,
    );
  }
  return words.length > 0 ? words.join('; ') : '—';
}

/** What follows cost and tokens that no record backs: the agent's own `usage`. */
export const CLAIMED = ' (claimed)';

/** The metrics of a side as table cells: tool calls, latency, cost, tokens. */
export function metricWords(s: SideSummary): {
  calls: string;
  latency: string;
  cost: string;
  tokens: string;
} {
  const m = s.metrics;
  if (!m) return { calls: '—', latency: '—', cost: '—', tokens: '—' };
  return {
    calls: m.toolCalls.toFixed(1),
    latency: duration(m.latencyMs),
    // Numbers nothing recorded are the agent's own word, and say so.
    cost: m.costUnreported ? '—' : `${dollars(m.costUsd)}${m.claimed ? CLAIMED : ''}`,
    tokens: m.tokensUnreported
      ? '—'
      : `${count(m.inputTokens)} in / ${count(m.outputTokens)} out${m.claimed ? CLAIMED : ''}`,
  };
}

function tally(c: { pass: number; fail: number; error: number }): number {
  return c.pass + c.fail + c.error;
}

/** One changed expectation in a sentence, e.g. `failed in 2 of 5 head repeats; passed in 5 of 5 base repeats`. */
export function changeWords(e: ChangedExpectation): string {
  const side = (
    name: string,
    c: { pass: number; fail: number; error: number },
    what: 'fail' | 'pass' | 'error',
  ) => {
    const n = tally(c);
    if (n === 0) return `no ${name} run`;
    const verb = what === 'fail' ? 'failed' : what === 'pass' ? 'passed' : 'could not be evaluated';
    return `${verb} in ${c[what]} of ${n} ${name} repeats`;
  };
  if (e.change === 'broke') return `${side('head', e.head, 'fail')}; ${side('base', e.base, 'pass')}`;
  if (e.change === 'fixed') return `${side('base', e.base, 'fail')}; ${side('head', e.head, 'pass')}`;
  if (e.change === 'pre-existing') return `${side('head', e.head, 'fail')}; ${side('base', e.base, 'fail')}`;
  const parts = [
    e.head.error > 0 ? side('head', e.head, 'error') : '',
    e.base.error > 0 ? side('base', e.base, 'error') : '',
  ];
  return parts.filter(Boolean).join('; ');
}

/** The tag of a judge expectation whose failures warn instead of blocking. */
export const UNCALIBRATED_TAG = 'judge uncalibrated';

/** The tags of a changed expectation: `critical, STATE_MISMATCH`, `critical, judge uncalibrated, JUDGE_FAIL`. */
export function changeTags(e: ChangedExpectation): string {
  return [e.critical ? 'critical' : '', e.uncalibrated ? UNCALIBRATED_TAG : '', e.label ?? '']
    .filter(Boolean)
    .join(', ');
}

/** Characters of each value of a state difference, and of context kept before where they differ. */
const STATE_CHARS = 60;
const STATE_CONTEXT = 20;

/**
 * The two values of a state difference, each cut to the same window around the first character
 * where they differ, so a long text that differs late shows its difference, not its common start.
 */
export function statePair(base: unknown, head: unknown): [string, string] {
  const text = (v: unknown) => Array.from(typeof v === 'string' ? v : canonicalJson(v));
  const a = text(base);
  const b = text(head);
  if (a.length <= STATE_CHARS && b.length <= STATE_CHARS) return [a.join(''), b.join('')];
  let p = 0;
  while (p < a.length && p < b.length && a[p] === b[p]) p++;
  const start = p > STATE_CONTEXT ? p - STATE_CONTEXT : 0;
  const window = (xs: string[]) => {
    const end = start + STATE_CHARS - (start > 0 ? 2 : 1);
    return `${start > 0 ? '…' : ''}${xs.slice(start, end).join('')}${end < xs.length ? '…' : ''}`;
  };
  return [window(a), window(b)];
}

/** A state difference as one line: `orders[ORD-1001].refund_count: base 1, head 2`. */
export function stateLine(d: StateDifference): string {
  const [base, head] = statePair(d.base, d.head);
  return `${d.table}[${d.key}].${d.column}: base ${base}, head ${head}`;
}

/**
 * The counts of a report in one line: `1 new critical failure, 0 regressed, ...; 2 flaky`, with the
 * unchanged cases that still fail named; a head-only run counts `3 pass, 1 fail`.
 */
export function countsLine(report: Report): string {
  const flaky = report.cases.filter((c) => c.flaky.base || c.flaky.head).length;
  if (headOnly(report)) {
    const labels = report.cases.map((c) => caseLabel(report, c));
    const n = (label: string) => count(labels.filter((l) => l === label).length);
    const incomplete = labels.includes('incomplete') ? `, ${n('incomplete')} incomplete` : '';
    return `${n('pass')} pass, ${n('fail')} fail${incomplete}; ${count(flaky)} flaky`;
  }
  const still = report.cases.filter(isStillFailing).length;
  const parts = CLASS_ORDER.map((cls) => {
    const words = `${count(report.counts[cls] ?? 0)} ${classWords(cls)}`;
    return cls === 'unchanged' && still > 0 ? `${words} (${count(still)} still failing)` : words;
  });
  return `${parts.join(', ')}; ${count(flaky)} flaky`;
}

/** Which episode stands for a side, e.g. `head repeat 2 (failed)`. */
export function stepsSource(side: string, s: EpisodeSteps): string {
  return `${side} repeat ${s.repeat} (${s.outcome})`;
}

export { stepHeader, stepRows } from './step-rows.js';

/** The steps left out of a table by the cap, as a sentence, or ''. */
export function stepsCutWords(steps: NonNullable<CaseReport['steps']>): string {
  const parts = [
    steps.base?.steps_cut ? `${plural(steps.base.steps_cut, 'more base call')}` : '',
    steps.head.steps_cut ? `${plural(steps.head.steps_cut, 'more head call')}` : '',
  ].filter(Boolean);
  return parts.length > 0 ? `${parts.join(' and ')} in episodes.jsonl.` : '';
}

/**
 * What the agent of a failing representative repeat said, one entry per side: `head repeat 1
 * (failed) replied, claiming SUCCESS` and the reply. A passing repeat's reply is not news.
 */
export function failingReplies(
  steps: NonNullable<CaseReport['steps']>,
): { side: 'base' | 'head'; title: string; reply: string }[] {
  const out: { side: 'base' | 'head'; title: string; reply: string }[] = [];
  for (const side of ['base', 'head'] as const) {
    const s = steps[side];
    if (!s || s.outcome === 'passed' || s.reply === undefined) continue;
    const claim = s.claimed ? `, claiming ${s.claimed}` : '';
    out.push({ side, title: `${stepsSource(side, s)} replied${claim}`, reply: s.reply });
  }
  return out;
}

/** What a class means for one side alone, where there is nothing to compare it with. */
const ONE_SIDE_WORDS: Record<string, string> = {
  'new-critical-failure': 'failing a critical expectation',
  regressed: 'failing an expectation',
};

/**
 * A gate reason as a report says it: the gate's text, except that one side alone (`run`) speaks of
 * failing, not of classes that compare with a base (`2 failing a critical expectation (a, b)`).
 */
export function reasonText(report: Report, r: GateReason): string {
  const words = r.class ? ONE_SIDE_WORDS[r.class] : undefined;
  const prefix = `${r.cases.length} ${r.class}`;
  if (!headOnly(report) || !words || !r.text.startsWith(prefix)) return r.text;
  return `${r.cases.length} ${words}${r.text.slice(prefix.length)}`;
}

/** The sentence above an agent's stderr: `head repeat 2: the agent exited with code 1; the last lines of its stderr:`. */
export function stderrTitle(
  side: string,
  e: { repeat: number; ended: string; tail: string; cut?: true },
): string {
  const what =
    e.tail === '' ? 'it wrote nothing to stderr' : e.cut ? 'the last lines of its stderr' : 'its stderr';
  return `${side} repeat ${e.repeat}: the agent ${e.ended}; ${what}`;
}

/** The pair that ran, the pin and the engine, in one line. */
export function runLine(report: Report): string {
  const side = (name: 'base' | 'head') => {
    const s = report.sides[name];
    if (!s) return `no ${name}`;
    return `${name} ${s.ref}${s.sha ? ` @ ${shortHash(s.sha, 7)}` : ''}${s.dirty ? ' with uncommitted changes' : ''}`;
  };
  const pair = report.sides.base ? `${side('base')} → ${side('head')}` : `${side('head')} alone`;
  const repeats = report.repeats ? ` × ${plural(report.repeats, 'repeat')}` : '';
  const scenarios = `${plural(report.cases.length, 'scenario')}${repeats}`;
  const shard = report.shard ? `, shard ${report.shard.index}/${report.shard.total}` : '';
  const reason = report.engine_reason ? ` (${report.engine_reason})` : '';
  return `${pair}; pinned suite ${shortHash(report.pin.suite_hash)}, template ${shortHash(report.pin.template_hash)}; ${scenarios}${shard}; engine ${report.engine}${reason}`;
}

/**
 * What the base took from the baseline cache, in one line: `base: 40 episodes reused from the run of
 * 2026-12-01 10:02 UTC (cache key 1a2b3c4d5e6f)`; null without a cache.
 */
export function baselineCacheLine(report: Report): string | null {
  const c = report.baseline_cache;
  if (!c) return null;
  const key = `cache key ${shortHash(c.key)}`;
  if (c.hit) {
    const when = c.stored_at ? ` from the run of ${utcMinute(c.stored_at)}` : '';
    const topUp = c.saved ? '; the episodes run now were stored too' : '';
    return `base: ${plural(c.reused_episodes, 'episode')} reused${when} (${key})${topUp}`;
  }
  const after = c.saved ? 'this run stored its base episodes for the next run' : (c.note ?? 'nothing stored');
  return `base: nothing reused from the cache (${key}); ${after}`;
}

/**
 * What the agents' model calls cost and what the budget cut, in one line: `models: 0.0180 USD
 * recorded of budget.run_usd 20 USD; 4 episodes not started (budget spent)`; null without models.
 */
export function modelSpendLine(report: Report): string | null {
  const s = report.model_spend;
  if (!s) return null;
  const of = s.run_usd === undefined ? '' : ` of budget.run_usd ${s.run_usd} USD`;
  const parts = [`models: ${s.agent_usd.toFixed(4)} USD recorded${of}`];
  if (s.episodes_cut > 0)
    parts.push(`${plural(s.episodes_cut, 'episode')} not started (budget.run_usd spent)`);
  if (s.calls_refused > 0)
    parts.push(
      `${plural(s.calls_refused, 'model call')} refused 429 budget_exceeded (budget.episode_usd ${s.episode_usd} USD spent)`,
    );
  return parts.join('; ');
}

/** `2026-12-01 10:02 UTC` from an ISO 8601 time; the text as given when it is not one. */
function utcMinute(iso: string): string {
  const t = new Date(iso);
  if (Number.isNaN(t.getTime())) return iso;
  return `${t.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** What a reader must know about the sides before reading the cases: base and head the same files. */
export function sidesNotes(report: Report): string[] {
  const notes: string[] = [];
  const f = report.filter;
  if (f) {
    notes.push(
      `Filtered (${filterWords(f) || 'a filter'}): ${f.selected} of the suite's ${f.total} scenarios ran. This is not a whole-suite run, so its verdict is WARN at best.`,
    );
  }
  for (const w of report.checkout_warnings ?? []) notes.push(`${w.side}: ${w.text}`);
  if (report.identical_sides) {
    notes.push(
      'Base and head are the same files (the same tree): every difference below is chance, and the comparison cannot show what a change does.',
    );
  }
  return notes;
}

/** Failure signatures with counts, most frequent first: `wrong-state-update 3, duplicate-effect 1`. */
export function signatureWords(signatures: Partial<Record<string, number>> | undefined): string | null {
  const entries = Object.entries(signatures ?? {}).filter((e): e is [string, number] => (e[1] ?? 0) > 0);
  if (entries.length === 0) return null;
  entries.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  return entries.map(([name, n]) => `${name} ${n}`).join(', ');
}

/** Cost per success of one side, saying which definition each number uses. */
export function costWords(c: {
  per_successful_episode: number | null;
  per_dependable_case: number | null;
}): string {
  const episode = c.per_successful_episode === null ? 'no passing repeat' : dollars(c.per_successful_episode);
  const dependable = c.per_dependable_case === null ? 'none dependable' : dollars(c.per_dependable_case);
  return `${episode} per successful episode (total cost / passing repeats), ${dependable} per dependable case (total cost / cases passed in every repeat)`;
}

/** Suite-level statistics in one line per side: `head: all-N in 38 of 44 scenarios (86%), per-run 93%`. */
export function suiteLines(report: Report): string[] {
  const out: string[] = [];
  for (const side of ['base', 'head'] as const) {
    const s = report.stats?.[side];
    if (!s || s.scenarios === 0) continue;
    // A scenario no repeat of this side could grade is no pass: it counts in the whole, named apart.
    const excluded = s.excluded ?? 0;
    const whole = s.scenarios + excluded;
    const passed = s.all_n === null ? 0 : Math.round(s.all_n * s.scenarios);
    const ungraded = excluded > 0 ? `, ${count(excluded)} not graded` : '';
    const allN =
      s.all_n === null
        ? '—'
        : `${count(passed)} of ${count(whole)} scenarios (${percent(passed / whole)})${ungraded}`;
    const hat = Object.entries(s.pass_hat_k).filter(([k]) => k !== '1');
    const extra = hat
      .map(([k, v]) => `, pass@${k} ${percent(s.pass_at_k[k] ?? null)}, pass^${k} ${percent(v)}`)
      .join('');
    out.push(`${side}: passed all-N in ${allN}, per-run pass rate ${percent(s.pass_rate)}${extra}`);
  }
  const listed = new Set<string>();
  for (const side of ['base', 'head'] as const) {
    const signatures = signatureWords(report.signatures?.[side]);
    if (signatures) out.push(`${side} failures by signature: ${signatures}`);
    for (const [name, n] of Object.entries(report.signatures?.[side] ?? {}))
      if ((n ?? 0) > 0) listed.add(name);
  }
  // Each signature listed is explained where it is listed, in FAILURE_SIGNATURES order.
  const meanings = FAILURE_SIGNATURES.filter((s) => listed.has(s)).map(
    (s) => `${s}: ${SIGNATURE_MEANINGS[s]}`,
  );
  if (meanings.length > 0)
    out.push(`signatures (the first that matches names a failed repeat): ${meanings.join('; ')}`);
  for (const side of ['base', 'head'] as const) {
    const cost = report.cost?.[side];
    if (cost) out.push(`${side} cost: ${costWords(cost)}`);
  }
  return out;
}

/** Where the gate policy came from, in a sentence. */
export function policyLine(from: PolicySource): string {
  if (from.side === 'base') return `Gate policy from ${from.reason}.`;
  if (from.side === 'head') return `Gate policy from the head: ${from.reason}.`;
  return `Gate policy: the built-in default, because ${from.reason}.`;
}

/** The suite changes, the ones that weaken the suite first. */
export function orderedSuiteChanges(changes: readonly SuiteChange[]): SuiteChange[] {
  return [...changes.filter((c) => c.weakens), ...changes.filter((c) => !c.weakens)];
}

/** `Suite changes: 3, 2 weaken the suite`. */
export function suiteChangesTitle(changes: readonly SuiteChange[]): string {
  const weak = changes.filter((c) => c.weakens).length;
  return `Suite changes against the base: ${count(changes.length)}, ${weak === 0 ? 'none weakens' : `${count(weak)} ${weak === 1 ? 'weakens' : 'weaken'}`} the suite`;
}

/** One suite change's sentence, elided: a list of a hundred tools stays one readable line. */
export function suiteChangeText(c: SuiteChange): string {
  return clip(c.text.replace(/\s+/g, ' '), 300);
}

/** How many suite changes a rendering lists before pointing at report.json. */
export const SUITE_CHANGES_SHOWN = 40;
