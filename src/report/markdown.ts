// What a reviewer reads in the PR: the verdict and counts first, then every blocking case with its
// evidence, the other changed cases, and the rest folded. One content for the sticky comment, the
// check-run summary and the job summary; only the size limit differs. Over the limit, the least
// relevant parts go first (the folded list, then details of other cases) and a line says so.
import type { CaseReport, Report, SideSummary } from '../model/report.js';
import { unfiredFaultLines } from './faults-fired.js';
import {
  allNWords,
  baselineCacheLine,
  caseLabel,
  caseReason,
  changeTags,
  changeWords,
  count,
  countsLine,
  flakyWords,
  groupCases,
  headOnly,
  isStillFailing,
  metricWords,
  modelSpendLine,
  orderedSuiteChanges,
  passKWords,
  plural,
  policyLine,
  REPEAT_DEFINITIONS,
  rateWords,
  reasonText,
  runLine,
  SUITE_CHANGES_SHOWN,
  sidesNotes,
  signatureWords,
  statePair,
  stillFailingWords,
  suiteChangesTitle,
  suiteChangeText,
  suiteLines,
} from './format.js';
import { replyLines, stderrDetail, stepsDetail } from './markdown-steps.js';
import { table } from './markdown-table.js';
import { mdCellCode, mdCode, mdText } from './markdown-text.js';
import { repeatsLine, repeatsWarningLine } from './repeats-rates.js';
import { unverifiedSentence, verdictWords } from './unverified.js';

/** The hidden first line of the sticky PR comment, by which the action finds it again. */
export const COMMENT_MARKER = '<!-- stategate:comment -->';

export type MarkdownVariant = 'comment' | 'check' | 'summary';

/** Size limits in UTF-8 bytes (never fewer than characters): GitHub's, with room to spare for the comment. */
export const MARKDOWN_LIMITS: Record<MarkdownVariant, number> = {
  comment: 60_000,
  check: 65_535,
  summary: 1_000_000,
};

export interface MarkdownOptions {
  variant?: MarkdownVariant;
  /** Overrides the variant's size limit. */
  limit?: number;
  /** Where the full report is, for the last line (default: report.html and report.json in the job's artifacts). */
  fullReport?: string;
}

const DEFAULT_FULL_REPORT =
  'report.html (base and head side by side: download the job’s artifact and open it, or run `stategate view`), with report.json and episodes.jsonl, in the output directory and the job’s artifacts';

function size(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

function sideRow(name: string, s: SideSummary | null): string[] {
  if (!s) return [name, 'no run', '—', '—', '—', '—', '—', '—'];
  const m = metricWords(s);
  // Words made from a report's numbers and keys: escaped too, a report may come from anywhere.
  return [name, allNWords(s), rateWords(s), passKWords(s), m.calls, m.latency, m.cost, m.tokens].map(mdText);
}

function caseTitle(report: Report, c: CaseReport): string {
  const flaky = flakyWords(c);
  return `${mdCode(c.id)}: ${mdText(caseLabel(report, c))}${flaky ? `, ${flaky}` : ''}`;
}

/** The expectations that fail on every side of a still-failing case. */
function stillFailingLines(c: CaseReport): string {
  const lines = stillFailingWords(c).map((e) => {
    const example = e.example ? ` Example: ${mdText(e.example)}` : '';
    return `- ${mdCode(e.id)}${e.tags ? ` (${mdText(e.tags)})` : ''}: ${mdText(e.text)}.${example}`;
  });
  return lines.length > 0 ? `**Failing on every side:**\n${lines.join('\n')}` : '';
}

/** Everything one case has to say, in reading order. */
function caseDetail(report: Report, c: CaseReport): string {
  const parts: string[] = [`#### ${caseTitle(report, c)}`];
  const about = [c.file ? mdCode(c.file) : '', c.description ? mdText(c.description) : '']
    .filter(Boolean)
    .join(': ');
  if (about) parts.push(about);
  const reason = caseReason(report, c);
  if (reason) parts.push(`**Why:** ${mdText(reason)}`);
  parts.push(...stderrDetail(c));
  if (c.divergence) parts.push(`**Trajectories:** ${mdText(c.divergence.sentence)}`);
  if (c.steps) parts.push(...replyLines(c.steps), stepsDetail(c.steps));
  if (c.state_diff.length > 0) {
    const rows = c.state_diff.map((d) => {
      const [base, head] = statePair(d.base, d.head);
      return [mdCellCode(`${d.table}[${d.key}]`), mdText(d.column), mdText(base), mdText(head)];
    });
    const cut = c.state_diff_cut
      ? `\n\n${mdText(plural(c.state_diff_cut, 'more difference'))} in report.json.`
      : '';
    parts.push(
      `**State that differs** (final values):\n\n${table(['row', 'column', 'base', 'head'], rows)}${cut}`,
    );
  }
  if (c.ignored_columns && c.ignored_columns.length > 0)
    parts.push(`Ignored columns (differ, not shown): ${c.ignored_columns.map(mdCode).join(', ')}`);
  const changed = c.expectations_changed ?? [];
  if (changed.length > 0) {
    const lines = changed.map((e) => {
      const tags = changeTags(e);
      const example = e.message ? ` Example: ${mdText(e.message)}` : '';
      return `- ${mdText(e.change)} ${mdCode(e.id)}${tags ? ` (${mdText(tags)})` : ''}: ${mdText(changeWords(e))}.${example}`;
    });
    parts.push(`**Expectations:**\n${lines.join('\n')}`);
  }
  const failing = isStillFailing(c) ? stillFailingLines(c) : '';
  if (failing) parts.push(failing);
  for (const side of ['base', 'head'] as const) {
    const text = c.flaky_explanation?.[side];
    if (text) parts.push(`**Flaky ${side}:** ${mdText(text)}`);
  }
  if (c.repeats_decision) parts.push(`**Repeats:** ${mdText(c.repeats_decision.reason)}`);
  for (const side of ['base', 'head'] as const) {
    const signatures = signatureWords(c[side]?.signatures);
    if (signatures) parts.push(`**Failures ${side}:** ${mdText(signatures)}`);
  }
  const header = [
    'side',
    'all-N',
    'per-run pass rate (95% CI)',
    'pass@k, pass^k',
    'tool calls',
    'latency (median)',
    'cost (total)',
    'tokens (total)',
  ];
  const rows =
    c.base === null && c.head
      ? [sideRow('head', c.head)]
      : [sideRow('base', c.base), sideRow('head', c.head)];
  parts.push(table(header, rows));
  return parts.join('\n\n');
}

function caseLine(report: Report, c: CaseReport): string {
  const reason = caseReason(report, c);
  return `- ${caseTitle(report, c)}${reason ? `: ${mdText(reason)}` : ''}`;
}

function restRow(report: Report, c: CaseReport): string {
  const allN = (s: SideSummary | null) => (s ? `${s.passes}/${s.runs}` : '—');
  if (headOnly(report))
    return `| ${mdCellCode(c.id)} | ${mdText(caseLabel(report, c))} | ${mdText(allN(c.head))} |`;
  return `| ${mdCellCode(c.id)} | ${mdText(caseLabel(report, c))} | ${mdText(allN(c.base))} | ${mdText(allN(c.head))} |`;
}

/**
 * Weaker than the default: no isolation, the unshare fallback (paths covered one by one, no
 * allowlist), the harness's uid (a user namespace), the machine's network. A report from before
 * `ran` existed is weaker with process groups only.
 */
function weakerIsolation(facts: NonNullable<Report['agent_isolation']>): boolean {
  if (facts.ran === undefined) return facts.mode === 'process-groups';
  return (
    facts.ran === 'none' || facts.ran === 'namespaces' || facts.uid === 'harness' || facts.network === 'host'
  );
}

function verdictLines(report: Report): string[] {
  const lines = [`## Stategate: ${mdText(verdictWords(report))}`, ''];
  // Which isolation the agents ran in comes first; weaker than the default, in bold.
  const isolation = report.agent_isolation;
  if (isolation)
    lines.push(weakerIsolation(isolation) ? `**${mdText(isolation.note)}**` : mdText(isolation.note), '');
  const unverified = unverifiedSentence(report);
  if (unverified) lines.push(`**${mdText(unverified)}**`, '');
  const reasons = (report.gate_reasons ?? []).map(
    (r) => `- ${r.verdict === 'BLOCK' ? 'blocks' : 'warns'}: ${mdText(reasonText(report, r))}`,
  );
  lines.push(...(reasons.length > 0 ? reasons : ['No case matched the gate.']));
  lines.push(...suiteChangeLines(report));
  lines.push(...unfiredFaultLines(report));
  lines.push('', `**${mdText(countsLine(report))}**`, '', mdText(runLine(report)));
  // The repeats policy and how often it errs; a fixed N that the observed flakiness makes noisy, in bold.
  if (report.repeats_rates) lines.push('', mdText(repeatsLine(report.repeats_rates)));
  if (report.repeats_warning && report.repeats)
    lines.push('', `**${mdText(repeatsWarningLine(report.repeats_warning, report.repeats))}**`);
  for (const note of sidesNotes(report)) lines.push('', `**${mdText(note)}**`);
  const cacheLine = baselineCacheLine(report);
  if (cacheLine) lines.push('', mdText(cacheLine));
  const spendLine = modelSpendLine(report);
  // What the budget cut changes what the verdict covers: bold, like the other notes on coverage.
  if (spendLine)
    lines.push('', report.model_spend!.episodes_cut > 0 ? `**${mdText(spendLine)}**` : mdText(spendLine));
  const suite = suiteLines(report);
  if (suite.length > 0)
    lines.push('', ...suite.map((l) => `- ${mdText(l)}`), '', `<sub>${mdText(REPEAT_DEFINITIONS)}</sub>`);
  return lines;
}

/** The policy's source and every difference from the base's suite, shown before the cases. */
function suiteChangeLines(report: Report): string[] {
  const lines: string[] = [];
  const changes = report.suite_changes ?? [];
  if (changes.length > 0) {
    const shown = orderedSuiteChanges(changes).slice(0, SUITE_CHANGES_SHOWN);
    lines.push('', `### ${mdText(suiteChangesTitle(changes))}`, '');
    lines.push(...shown.map((c) => `- ${c.weakens ? '**weakens:** ' : ''}${mdText(suiteChangeText(c))}`));
    if (changes.length > shown.length)
      lines.push(`- ${plural(changes.length - shown.length, 'more change')} in report.json`);
  }
  if (report.policy_from) lines.push('', mdText(policyLine(report.policy_from)));
  return lines;
}

type Mode = 'full' | 'line' | 'cut';

interface Plan {
  modes: Mode[];
  restShown: number;
}

interface Parts {
  report: Report;
  header: string;
  blocking: number;
  /** Of `important`, after the blocking ones: the other changed cases; the still-failing ones follow. */
  changed: number;
  important: CaseReport[];
  rest: CaseReport[];
  footer: string;
  limit: number;
  variant: MarkdownVariant;
}

function notice(parts: Parts, plan: Plan): string {
  const lined = plan.modes.filter((m) => m === 'line').length;
  const cut = plan.modes.filter((m) => m === 'cut').length;
  const restCut = parts.rest.length - plan.restShown;
  if (lined + cut + restCut === 0) return '';
  const what = [
    lined > 0 ? `${plural(lined, 'case is', 'cases are')} shown in one line` : '',
    cut > 0 ? `${plural(cut, 'changed case is', 'changed cases are')} not shown` : '',
    restCut > 0 ? `${plural(restCut, 'other case is', 'other cases are')} not listed` : '',
  ].filter(Boolean);
  return `**Trimmed** to fit the ${count(parts.limit)}-character limit of the ${parts.variant === 'comment' ? 'PR comment' : parts.variant === 'check' ? 'check run' : 'job summary'}: ${what.join(', ')}. The full report is in ${parts.footer}.`;
}

function assemble(parts: Parts, plan: Plan, detail: (i: number) => string): string {
  const out: string[] = [parts.header];
  const section = (title: string, from: number, to: number) => {
    let text = '';
    for (let i = from; i < to; i++) {
      const mode = plan.modes[i];
      if (mode === 'cut') continue;
      // One-line cases form one tight list; a detailed case stands apart.
      const separator = text === '' ? '' : mode === 'line' && plan.modes[i - 1] === 'line' ? '\n' : '\n\n';
      text += separator + (mode === 'full' ? detail(i) : caseLine(parts.report, parts.important[i]));
    }
    if (text) out.push(`### ${title}`, text);
  };
  section(`Blocking (${count(parts.blocking)})`, 0, parts.blocking);
  const single = headOnly(parts.report);
  const changedEnd = parts.blocking + parts.changed;
  section(
    `${single ? 'Other failing cases' : 'Other changed cases'} (${count(parts.changed)})`,
    parts.blocking,
    changedEnd,
  );
  section(
    `Still failing (${count(parts.important.length - changedEnd)})`,
    changedEnd,
    parts.important.length,
  );
  if (parts.rest.length > 0) {
    const rows = parts.rest.slice(0, plan.restShown).map((c) => restRow(parts.report, c));
    const more = parts.rest.length - plan.restShown;
    const header = single
      ? ['scenario', 'result', 'passes']
      : ['scenario', 'class', 'base passes', 'head passes'];
    const tableText = rows.length > 0 ? `${table(header, []).trimEnd()}\n${rows.join('\n')}` : '';
    const tail = more > 0 ? `${tableText ? '\n\n' : ''}${plural(more, 'more case')} in report.json.` : '';
    const what = plural(parts.rest.length, single ? 'passing case' : 'unchanged case');
    out.push(`<details><summary>${what}</summary>\n\n${tableText}${tail}\n\n</details>`);
  }
  const trimmed = notice(parts, plan);
  if (trimmed) out.push(trimmed);
  out.push(`Full report: ${parts.footer}.`);
  return `${out.join('\n\n')}\n`;
}

/** Chooses what to show within the limit: one line for every changed case first, then details in order, then the folded rows. */
function planWithin(parts: Parts, detail: (i: number) => string): Plan {
  const n = parts.important.length;
  const worst: Plan = { modes: Array<Mode>(n).fill('cut'), restShown: 0 };
  // The skeleton with every part cut carries the longest notice, so what fits beside it fits.
  let budget = parts.limit - size(assemble(parts, worst, detail)) - 200;
  const modes: Mode[] = Array<Mode>(n).fill('cut');
  const lineCost = parts.important.map((c) => size(caseLine(parts.report, c)) + 2);
  for (let i = 0; i < n && lineCost[i] <= budget; i++) {
    modes[i] = 'line';
    budget -= lineCost[i];
  }
  for (let i = 0; i < n && modes[i] === 'line'; i++) {
    const extra = size(detail(i)) - lineCost[i] + 2;
    if (extra <= budget) {
      modes[i] = 'full';
      budget -= extra;
    }
  }
  let restShown = 0;
  if (modes.every((m) => m !== 'cut')) {
    budget -= 120; // the table header
    while (
      restShown < parts.rest.length &&
      size(restRow(parts.report, parts.rest[restShown])) + 1 <= budget
    ) {
      budget -= size(restRow(parts.report, parts.rest[restShown])) + 1;
      restShown++;
    }
  }
  return { modes, restShown };
}

/** Renders a report as markdown for the PR comment, the check-run summary or the job summary, within its size limit. */
export function renderMarkdown(report: Report, options: MarkdownOptions = {}): string {
  const variant = options.variant ?? 'comment';
  const limit = options.limit ?? MARKDOWN_LIMITS[variant];
  const header = [...(variant === 'comment' ? [COMMENT_MARKER] : []), ...verdictLines(report)].join('\n');
  const { blocking, changed, stillFailing, rest } = groupCases(report);
  const parts: Parts = {
    report,
    header,
    blocking: blocking.length,
    changed: changed.length,
    important: [...blocking, ...changed, ...stillFailing],
    rest,
    footer: options.fullReport ?? DEFAULT_FULL_REPORT,
    limit,
    variant,
  };
  const details = new Map<number, string>();
  const detail = (i: number) => {
    if (!details.has(i)) details.set(i, caseDetail(report, parts.important[i]));
    return details.get(i)!;
  };
  const whole: Plan = { modes: Array<Mode>(parts.important.length).fill('full'), restShown: rest.length };
  const full = assemble(parts, whole, detail);
  if (size(full) <= limit) return full;
  const plan = planWithin(parts, detail);
  let out = assemble(parts, plan, detail);
  // The plan's arithmetic is an estimate: give up more until the text fits.
  while (size(out) > limit && shrink(plan)) out = assemble(parts, plan, detail);
  return size(out) <= limit ? out : truncateBytes(out, limit);
}

/** Gives up the least relevant part still shown; false when nothing is left to give up. */
function shrink(plan: Plan): boolean {
  if (plan.restShown > 0) {
    plan.restShown = Math.floor(plan.restShown / 2);
    return true;
  }
  const full = plan.modes.lastIndexOf('full');
  if (full >= 0) plan.modes[full] = 'line';
  const line = full >= 0 ? full : plan.modes.lastIndexOf('line');
  if (full < 0 && line >= 0) plan.modes[line] = 'cut';
  return full >= 0 || line >= 0;
}

/**
 * Cuts text to at most `limit` UTF-8 bytes at a line break: every line is whole, so no escape,
 * code span or table row is left half open for the text after it to break out of.
 */
function truncateBytes(text: string, limit: number): string {
  let out = '';
  let used = 0;
  for (const line of text.split(/(?<=\n)/)) {
    used += size(line);
    if (used > limit) break;
    out += line;
  }
  return out;
}
