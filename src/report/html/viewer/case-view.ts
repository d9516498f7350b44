/// <reference lib="dom" />
// One case opened in report.html: base and head side by side (repeats as a strip, the chosen repeat's
// reply, stderr and results), then the chosen pair's steps aligned with the first difference marked,
// and the rows they changed with the differing part of each value highlighted.
import type { Side } from '../../../model/episode.js';
import type { CaseReport, StepReport } from '../../../model/report.js';
import type { CallView, EpisodeView, ViewerData } from '../viewer-data.js';
import { defaultRepeat, firstStepDifference, pairRows, show, splitDifference } from './differences.js';
import { h, replace } from './dom.js';

const SIDES: Side[] = ['base', 'head'];

/** A value pair with the differing middle of each marked. */
function marked(a: string, b: string): [HTMLElement, HTMLElement] {
  const s = splitDifference(a, b);
  const one = (mid: string) =>
    h('span', { class: 'mono' }, s.prefix, mid ? h('mark', null, mid) : null, s.suffix);
  return [one(s.a), one(s.b)];
}

function callCell(c: CallView | undefined): HTMLElement {
  if (!c) return h('td', { class: 'muted' }, '(no call: stopped)');
  // The code beside the status, as the caller saw them: `409 SLOT_TAKEN`.
  const status = [
    c.code ? `${c.status} ${c.code}` : String(c.status),
    c.fault ? `fault ${c.fault}` : null,
    c.effect !== 'none' ? c.effect : null,
  ]
    .filter(Boolean)
    .join(' · ');
  return h(
    'td',
    null,
    h('div', { class: 'mono' }, `${c.tool}(${show(c.args)})`),
    h('div', { class: c.status >= 200 && c.status < 300 ? 'small pass' : 'small fail' }, status),
    c.note ? h('div', { class: 'small error' }, c.note) : null,
    c.same_effect_as !== undefined
      ? h(
          'div',
          { class: 'same-effect' },
          h('span', { class: 'badge first' }, `applied the effect of step ${c.same_effect_as} again`),
        )
      : null,
    c.result !== undefined ? h('pre', null, show(c.result)) : null,
  );
}

/** Steps from report.json (no episodes file): what the representative episode called. */
function stepCalls(steps: StepReport[]): CallView[] {
  return steps.map((s, i) => ({
    seq: i + 1,
    tool: s.tool,
    args: s.args,
    status: s.status,
    effect: s.effect,
    ...(s.fault ? { fault: s.fault } : {}),
    ...(s.code ? { code: s.code } : {}),
  }));
}

function stepsTable(sides: Side[], calls: Record<Side, CallView[]>): HTMLElement {
  const first = sides.length === 2 ? firstStepDifference(calls.base, calls.head) : null;
  const n = Math.max(...sides.map((s) => calls[s].length));
  const rows: HTMLElement[] = [];
  for (let i = 0; i < n; i++) {
    rows.push(
      h(
        'tr',
        { class: i === first ? 'step first-diff' : 'step', 'data-step': String(i + 1) },
        h(
          'td',
          null,
          String(i + 1),
          i === first ? h('div', null, h('span', { class: 'badge first' }, 'first difference')) : null,
        ),
        ...sides.map((s) => callCell(calls[s][i])),
      ),
    );
  }
  const summary =
    sides.length < 2
      ? null
      : first === null
        ? 'The two repeats made the same calls.'
        : `The calls first differ at step ${first + 1}.`;
  return h(
    'div',
    null,
    summary
      ? h(
          'p',
          {
            class: first === null ? 'muted' : 'fail',
            'data-first-difference': first === null ? '' : String(first + 1),
          },
          summary,
        )
      : null,
    n === 0
      ? h('p', { class: 'muted' }, 'No tool was called.')
      : h(
          'table',
          { class: 'steps' },
          h('tr', null, h('th', null, 'step'), ...sides.map((s) => h('th', null, s))),
          rows,
        ),
  );
}

function rowsTable(base: EpisodeView, head: EpisodeView): HTMLElement {
  const pairs = pairRows(base.changes, head.changes);
  if (pairs.length === 0) return h('p', { class: 'muted' }, 'Neither repeat changed a row.');
  const body: HTMLElement[] = [];
  for (const p of pairs) {
    const label = `${p.table}[${p.key}] ${p.op}`;
    if (!p.base || !p.head) {
      const row = show((p.base ?? p.head)?.after ?? (p.base ?? p.head)?.before);
      const only = h(
        'td',
        { class: 'differs' },
        h('div', { class: 'small' }, 'only this side made this change'),
        h('span', { class: 'mono' }, row),
      );
      const none = h('td', { class: 'muted' }, '(no such change)');
      body.push(
        h(
          'tr',
          { class: 'row-diff' },
          h('td', null, label),
          h('td', null, '(row)'),
          p.base ? only : none,
          p.head ? only : none,
        ),
      );
      continue;
    }
    for (const c of p.columns) {
      const [b, hd] = c.differs
        ? marked(c.base, c.head)
        : [h('span', { class: 'mono' }, c.base), h('span', { class: 'mono' }, c.head)];
      body.push(
        h(
          'tr',
          { class: c.differs ? 'row-diff' : 'row-same' },
          h('td', null, label),
          h('td', null, c.column),
          h('td', c.differs ? { class: 'differs' } : null, b),
          h('td', c.differs ? { class: 'differs' } : null, hd),
        ),
      );
    }
  }
  return h(
    'table',
    { class: 'rows' },
    h(
      'tr',
      null,
      h('th', null, 'row'),
      h('th', null, 'column'),
      h('th', null, 'base'),
      h('th', null, 'head'),
    ),
    body,
  );
}

function episodeBlock(e: EpisodeView): HTMLElement {
  return h(
    'div',
    { class: 'episode', 'data-episode': e.episode },
    h(
      'div',
      { class: 'small' },
      h('span', { class: e.grade }, e.grade),
      ` · repeat ${e.repeat} · ${e.ended}`,
      e.outcome ? ` · outcome ${e.outcome}` : '',
      ' · ',
      h('span', { class: 'mono' }, e.episode),
    ),
    e.infraError ? h('p', { class: 'error' }, `Not graded: ${e.infraError}`) : null,
    h('h4', null, 'Reply'),
    e.reply !== undefined
      ? h('pre', { class: 'reply' }, e.reply)
      : h('p', { class: 'muted' }, `No result was printed${e.resultError ? `: ${e.resultError}` : '.'}`),
    e.stderr ? [h('h4', null, 'stderr (tail)'), h('pre', { class: 'stderr' }, e.stderr)] : null,
    h('h4', null, 'Expectations'),
    h(
      'table',
      { class: 'results' },
      e.results.map((r) =>
        h(
          'tr',
          null,
          h('td', { class: r.grade }, r.grade),
          h('td', { class: 'mono' }, r.id, r.critical ? ' (critical)' : ''),
          h('td', null, r.label ? `${r.label}: ` : '', r.message),
        ),
      ),
    ),
  );
}

/** Generic rows for lists other parts of the record add (conversation turns, model calls). */
function listBlock(title: string, items: unknown[] | undefined): HTMLElement | null {
  if (!items || items.length === 0) return null;
  return h(
    'div',
    null,
    h('h4', null, title),
    h(
      'ol',
      { class: title === 'Conversation' ? 'turns' : 'model-calls' },
      items.map((t) => h('li', null, h('pre', null, show(t)))),
    ),
  );
}

/** Renders one case into `el`; clicking a repeat re-renders it with that repeat chosen. */
export function renderCase(el: HTMLElement, c: CaseReport, data: ViewerData): void {
  const eps = data.episodes?.[c.id] ?? {};
  const sides = SIDES.filter((s) => c[s] !== null);
  const chosen: Partial<Record<Side, number>> = {};
  for (const s of sides)
    chosen[s] = defaultRepeat(
      (eps[s] ?? []).map((e) => e.grade),
      s,
    );
  const draw = () => {
    const picked = (s: Side) => eps[s]?.[chosen[s] ?? 0];
    const columns = sides.map((s) => {
      const list = eps[s] ?? [];
      const summary = c[s];
      return h(
        'div',
        { class: 'side', 'data-side': s },
        h(
          'h3',
          null,
          `${s}: ${data.report.sides[s]?.ref ?? ''}`,
          summary
            ? h('span', { class: 'muted small' }, ` ${summary.passes}/${summary.runs} repeats passed`)
            : null,
        ),
        list.length > 0
          ? h(
              'div',
              { class: 'strip', 'aria-label': `${s} repeats` },
              list.map((e, i) => {
                const b = h(
                  'button',
                  {
                    type: 'button',
                    class: `g-${e.grade}${i === chosen[s] ? ' selected' : ''}`,
                    title: `repeat ${e.repeat}: ${e.grade}`,
                    'data-repeat': String(e.repeat),
                  },
                  String(e.repeat),
                );
                b.addEventListener('click', () => {
                  chosen[s] = i;
                  draw();
                });
                return b;
              }),
            )
          : h('p', { class: 'muted small' }, 'No episodes file beside the report: repeats are not shown.'),
        picked(s) ? episodeBlock(picked(s) as EpisodeView) : stderrFromReport(c, s),
      );
    });
    const calls = {} as Record<Side, CallView[]>;
    for (const s of sides) calls[s] = picked(s)?.calls ?? stepCalls(c.steps?.[s]?.steps ?? []);
    const pe = { base: picked('base'), head: picked('head') };
    replace(
      el,
      caseFacts(c),
      h('div', { class: 'sides' }, columns),
      h(
        'h3',
        null,
        sides.length === 2
          ? `Steps: base repeat ${pe.base?.repeat ?? '?'} and head repeat ${pe.head?.repeat ?? '?'}`
          : 'Steps',
      ),
      stepsTable(sides, calls),
      pe.base && pe.head
        ? [h('h3', null, 'Rows the two repeats changed'), rowsTable(pe.base, pe.head)]
        : null,
      sides.map((s) => [
        listBlock('Conversation', picked(s)?.turns),
        listBlock('Model calls', picked(s)?.model_calls),
      ]),
    );
  };
  draw();
}

function stderrFromReport(c: CaseReport, s: Side): HTMLElement | null {
  const e = c.agent_stderr?.[s];
  if (!e) return null;
  return h('div', null, h('p', null, `Repeat ${e.repeat} ${e.ended}`), h('pre', { class: 'stderr' }, e.tail));
}

function caseFacts(c: CaseReport): HTMLElement {
  const changed = c.expectations_changed ?? [];
  return h(
    'div',
    null,
    c.description ? h('p', null, c.description) : null,
    c.file ? h('p', { class: 'muted small mono' }, c.file) : null,
    c.reason ? h('p', null, c.reason) : null,
    c.divergence && c.divergence.kind !== 'same'
      ? h('p', { class: 'divergence' }, c.divergence.sentence)
      : null,
    ...SIDES.map((s) =>
      c.flaky_explanation?.[s] ? h('p', null, `Flaky ${s}: ${c.flaky_explanation[s]}`) : null,
    ),
    changed.length > 0
      ? h(
          'table',
          { class: 'changed' },
          h(
            'tr',
            null,
            h('th', null, 'expectation'),
            h('th', null, 'change'),
            h('th', null, 'base pass/fail/error'),
            h('th', null, 'head pass/fail/error'),
            h('th', null, 'message'),
          ),
          changed.map((x) =>
            h(
              'tr',
              null,
              h('td', { class: 'mono' }, x.id, x.critical ? ' (critical)' : ''),
              h('td', null, x.change, x.label ? ` ${x.label}` : ''),
              h('td', null, `${x.base.pass}/${x.base.fail}/${x.base.error}`),
              h('td', null, `${x.head.pass}/${x.head.fail}/${x.head.error}`),
              h('td', null, x.message ?? ''),
            ),
          ),
        )
      : null,
    c.state_diff.length > 0
      ? h(
          'div',
          null,
          h('h3', null, 'State that differs (base and head, as report.json records it)'),
          h(
            'table',
            { class: 'state-diff' },
            h('tr', null, h('th', null, 'table[key].column'), h('th', null, 'base'), h('th', null, 'head')),
            c.state_diff.map((d) => {
              const [b, hd] = marked(show(d.base), show(d.head));
              return h(
                'tr',
                null,
                h('td', { class: 'mono' }, `${d.table}[${d.key}].${d.column}`),
                h('td', { class: 'differs' }, b),
                h('td', { class: 'differs' }, hd),
              );
            }),
          ),
          c.state_diff_cut
            ? h('p', { class: 'muted small' }, `${c.state_diff_cut} more differences in report.json`)
            : null,
        )
      : null,
    c.ignored_columns && c.ignored_columns.length > 0
      ? h(
          'p',
          { class: 'muted small' },
          `Ignored columns (differ, not shown): ${c.ignored_columns.join(', ')}`,
        )
      : null,
  );
}
