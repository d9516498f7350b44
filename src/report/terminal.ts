// The report as plain text for a terminal or a CI log: the same information as the markdown, in
// the same order, with optional ANSI colour; a single-side run adds its per-scenario table.
import type { Side } from '../model/episode.js';
import type { CaseReport, ExpectationCounts, GateVerdict, Report, SideSummary } from '../model/report.js';
import { visible as inert } from './escape.js';
import {
  allNWords,
  baselineCacheLine,
  CLAIMED,
  caseLabel,
  caseReason,
  changeTags,
  changeWords,
  classWords,
  countsLine,
  failingReplies,
  flakyWords,
  groupCases,
  headOnly,
  isStillFailing,
  metricWords,
  orderedSuiteChanges,
  passKWords,
  plural,
  policyLine,
  rateWords,
  reasonText,
  runLine,
  SUITE_CHANGES_SHOWN,
  sidesNotes,
  stateLine,
  stderrTitle,
  stepRows,
  stepsCutWords,
  stepsSource,
  stillFailingWords,
  suiteChangesTitle,
  suiteChangeText,
  suiteLines,
  UNCALIBRATED_TAG,
} from './format.js';
import { repeatsLine, repeatsWarningLine } from './repeats-rates.js';
import { unverifiedSentence, verdictWords } from './unverified.js';

export interface TerminalOptions {
  /** ANSI colour (the caller decides: a TTY, no NO_COLOR). */
  color?: boolean;
}

type Paint = (text: string, style: keyof typeof STYLES) => string;

const STYLES = { bold: '1', dim: '2', red: '31', green: '32', yellow: '33' } as const;

function painter(color: boolean | undefined): Paint {
  return color ? (text, style) => `\x1b[${STYLES[style]}m${text}\x1b[0m` : (text) => text;
}

const VERDICT_STYLE: Record<GateVerdict, keyof typeof STYLES> = {
  PASS: 'green',
  WARN: 'yellow',
  BLOCK: 'red',
};

const LABEL_WIDTH = 10;

// Values are shown through `inert`: a carriage return, an escape sequence or a bidi override from
// an agent or a database must not rewrite the lines around it in a terminal or a CI log.
function field(label: string, lines: string[]): string[] {
  return lines.map((line, i) => `  ${inert(i === 0 ? label : '').padEnd(LABEL_WIDTH)}${line}`);
}

function sideLine(s: SideSummary): string {
  const m = metricWords(s);
  const passK = passKWords(s);
  // Usage the agent never reported is no number: `cost —` rather than `$0`.
  const cost = m.cost === '—' ? 'cost —' : m.cost;
  const claimed = m.tokens.endsWith(CLAIMED);
  const tokens =
    m.tokens === '—'
      ? 'tokens —'
      : `${claimed ? m.tokens.slice(0, -CLAIMED.length) : m.tokens} tokens${claimed ? CLAIMED : ''}`;
  return `all-N ${allNWords(s)} · ${rateWords(s)} per run${passK === '—' ? '' : ` · ${passK}`} · ${m.calls} calls · ${m.latency} · ${cost} · ${tokens}`;
}

/** The step table as lines: `* 2  base get_refund_policy(…) → 200  |  head refund_payment(…) → 504 (applied)`. */
function stepLines(steps: NonNullable<CaseReport['steps']>): string[] {
  const { rows, divergent, turns } = stepRows(steps);
  const source = [steps.base ? stepsSource('base', steps.base) : '', stepsSource('head', steps.head)]
    .filter(Boolean)
    .join(' beside ');
  // A conversation's turn has nothing it got: its text alone.
  const side = (call: string, got: string, turn: boolean) =>
    call === '' ? '—' : turn ? call : `${call} → ${got}`;
  const lines = rows.map(([n, ...cells], r) => {
    const mark = Number(n) === divergent ? '*' : ' ';
    const text =
      cells.length === 4
        ? `base ${side(cells[0], cells[1], turns[r][0])}  |  head ${side(cells[2], cells[3], turns[r][1])}`
        : side(cells[0], cells[1], turns[r][0]);
    return `${mark}${n.padStart(3)}  ${inert(text)}`;
  });
  const cut = stepsCutWords(steps);
  return [
    inert(`${source}${divergent > 0 ? '; * the first step that differs' : ''}`),
    ...(lines.length > 0 ? lines : ['no tool was called']),
    ...(cut ? [inert(cut)] : []),
  ];
}

function caseBlock(report: Report, c: CaseReport, paint: Paint, blocking: boolean): string[] {
  const flaky = flakyWords(c);
  const label = caseLabel(report, c);
  const colour = blocking ? 'red' : c.class === 'improved' || label === 'pass' ? 'green' : 'yellow';
  const title = `${paint(inert(label.toUpperCase()), colour)}  ${paint(inert(c.id), 'bold')}${flaky ? `  (${flaky})` : ''}`;
  const out = [title];
  if (c.file) out.push(...field('file', [inert(c.file)]));
  const reason = caseReason(report, c);
  if (reason) out.push(...field('why', [inert(reason)]));
  for (const side of ['base', 'head'] as const) {
    const e = c.agent_stderr?.[side];
    if (!e) continue;
    const tail = e.tail === '' ? [] : e.tail.split('\n').map((l) => paint(`| ${inert(l)}`, 'dim'));
    out.push(...field('stderr', [inert(`${stderrTitle(side, e)}${e.tail === '' ? '' : ':'}`), ...tail]));
  }
  if (c.divergence) out.push(...field('steps', [inert(c.divergence.sentence)]));
  if (c.steps) {
    for (const r of failingReplies(c.steps))
      out.push(...field('reply', [inert(`${r.title}: ${r.reply.trim() === '' ? '(empty)' : r.reply}`)]));
    out.push(...field('calls', stepLines(c.steps)));
  }
  if (c.state_diff.length > 0) {
    const more = c.state_diff_cut ? [`(${plural(c.state_diff_cut, 'more difference')} in report.json)`] : [];
    out.push(...field('state', [...c.state_diff.map((d) => inert(stateLine(d))), ...more]));
  }
  if (c.ignored_columns && c.ignored_columns.length > 0)
    out.push(...field('ignored columns', [inert(c.ignored_columns.join(', '))]));
  for (const e of c.expectations_changed ?? []) {
    const tags = changeTags(e);
    const lines = [inert(`${e.id}${tags ? ` (${tags})` : ''}: ${changeWords(e)}`)];
    if (e.message) lines.push(paint(inert(e.message.replace(/\s+/g, ' ')), 'dim'));
    out.push(...field(e.change, lines));
  }
  for (const e of isStillFailing(c) ? stillFailingWords(c) : []) {
    const lines = [inert(`${e.id}${e.tags ? ` (${e.tags})` : ''}: ${e.text}`)];
    if (e.example) lines.push(paint(inert(e.example.replace(/\s+/g, ' ')), 'dim'));
    out.push(...field('failing', lines));
  }
  for (const side of ['base', 'head'] as const) {
    const text = c.flaky_explanation?.[side];
    if (text) out.push(...field('flaky', [`${side}: ${inert(text)}`]));
  }
  if (c.repeats_decision) out.push(...field('repeats', [inert(c.repeats_decision.reason)]));
  if (c.base) out.push(...field('base', [inert(sideLine(c.base))]));
  if (c.head) out.push(...field('head', [inert(sideLine(c.head))]));
  return out;
}

function idList(cases: CaseReport[], max = 10): string {
  const ids = cases.slice(0, max).map((c) => inert(c.id));
  return cases.length > max ? `${ids.join(', ')} and ${cases.length - max} more` : ids.join(', ');
}

function tally(c: ExpectationCounts): string {
  const n = c.pass + c.fail + c.error;
  return `${c.pass}/${n}${c.error > 0 ? ` (${c.error} not evaluated)` : ''}`;
}

/** The per-scenario table of one side: all-N first, then passes out of N for every expectation. */
export function renderSideTable(report: Report, side: Side = 'head', options: TerminalOptions = {}): string {
  const paint = painter(options.color);
  const rows: [string, string, string][] = [];
  for (const c of [...report.cases].sort((a, b) => (a.id < b.id ? -1 : 1))) {
    const s = c[side];
    if (!s) continue;
    const allN = s.stats?.all_n ?? (s.runs > 0 && s.passes === s.runs);
    rows.push([
      allN ? paint('yes', 'green') : paint('no', 'red'),
      `${s.passes}/${s.runs}`,
      paint(inert(c.id), 'bold'),
    ]);
    for (const [id, e] of Object.entries(s.expectations)) {
      const labels = inert(
        Object.entries(e.labels ?? {})
          .map(([label, n]) => `${label} ×${n}`)
          .join(', '),
      );
      const example =
        e.example && e.pass < e.pass + e.fail + e.error ? `: ${inert(e.example.replace(/\s+/g, ' '))}` : '';
      const note = labels || example ? `  ${paint(`${labels}${example}`, 'dim')}` : '';
      const tags = [e.critical ? 'critical' : '', e.uncalibrated ? UNCALIBRATED_TAG : ''].filter(Boolean);
      rows.push(['', tally(e), `  ${inert(id)}${tags.length > 0 ? ` (${tags.join(', ')})` : ''}${note}`]);
    }
  }
  // Pad on the text without colour codes, so columns line up either way.
  const visible = (t: string) => t.replace(/\x1b\[\d+m/g, '').length;
  const pad = (t: string, w: number) => t + ' '.repeat(Math.max(0, w - visible(t)));
  const widths = [5, 6].map((min, i) => Math.max(min, ...rows.map((r) => visible(r[i]))));
  const header = [pad('ALL-N', widths[0]), pad('PASSES', widths[1]), 'SCENARIO / EXPECTATION'].join('  ');
  return `${[paint(header, 'bold'), ...rows.map((r) => `${pad(r[0], widths[0])}  ${pad(r[1], widths[1])}  ${r[2]}`)].join('\n')}\n`;
}

/** Renders a report as plain text, with ANSI colour when asked. */
export function renderTerminal(report: Report, options: TerminalOptions = {}): string {
  const paint = painter(options.color);
  const out: string[] = [
    `${paint('Stategate:', 'bold')} ${paint(inert(verdictWords(report)), VERDICT_STYLE[report.verdict])}`,
  ];
  const unverified = unverifiedSentence(report);
  if (unverified) out.push(`  ${inert(unverified)}`);
  for (const r of report.gate_reasons ?? [])
    out.push(`  ${r.verdict === 'BLOCK' ? 'blocks' : 'warns'}: ${inert(reasonText(report, r))}`);
  const changes = report.suite_changes ?? [];
  if (changes.length > 0) {
    out.push(paint(suiteChangesTitle(changes), 'bold'));
    const shown = orderedSuiteChanges(changes).slice(0, SUITE_CHANGES_SHOWN);
    for (const c of shown)
      out.push(`  ${c.weakens ? paint('weakens', 'red') : 'change '}  ${inert(suiteChangeText(c))}`);
    if (changes.length > shown.length)
      out.push(`  ${plural(changes.length - shown.length, 'more change')} in report.json`);
  }
  if (report.policy_from) out.push(inert(policyLine(report.policy_from)));
  out.push(
    inert(countsLine(report)),
    inert(runLine(report)),
    ...(report.repeats_rates ? [inert(repeatsLine(report.repeats_rates))] : []),
    ...(report.repeats_warning && report.repeats
      ? [paint(inert(repeatsWarningLine(report.repeats_warning, report.repeats)), 'yellow')]
      : []),
    ...sidesNotes(report).map(inert),
    ...[baselineCacheLine(report)].filter((l) => l !== null).map(inert),
    ...suiteLines(report).map((l) => `  ${inert(l)}`),
  );

  const { blocking, changed, stillFailing, rest } = groupCases(report);
  for (const c of blocking) out.push('', ...caseBlock(report, c, paint, true));
  for (const c of changed) out.push('', ...caseBlock(report, c, paint, false));
  for (const c of stillFailing) out.push('', ...caseBlock(report, c, paint, false));
  if (rest.length > 0) {
    const label = headOnly(report) ? 'pass' : classWords('unchanged');
    out.push('', `${paint(label.toUpperCase(), 'dim')}  ${plural(rest.length, 'case')}: ${idList(rest)}`);
  }
  if (report.sides.base === null) out.push('', renderSideTable(report, 'head', options).trimEnd());
  return `${out.join('\n')}\n`;
}
