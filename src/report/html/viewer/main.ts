/// <reference lib="dom" />
// report.html's script: reads the JSON data block, renders the verdict, its reasons, the suite
// changes and the run facts, and the cases with filters and search; a case opens on click.
import type { CaseReport, Report } from '../../../model/report.js';
import { reasonText } from '../../format.js';
import type { ViewerData } from '../viewer-data.js';
import { renderCase } from './case-view.js';
import { h, replace } from './dom.js';

const DEFAULT_GATE = { block: ['new-critical-failure', 'incomplete'], warn: ['regressed', 'flaky'] };

/** The verdict one case gives under the report's gate (flaky counts where the gate lists it). */
export function caseVerdict(
  c: CaseReport,
  gate: { block: string[]; warn: string[] },
): 'BLOCK' | 'WARN' | 'PASS' {
  const flaky = c.flaky.base || c.flaky.head;
  if (gate.block.includes(c.class) || (flaky && gate.block.includes('flaky'))) return 'BLOCK';
  if (gate.warn.includes(c.class) || (flaky && gate.warn.includes('flaky'))) return 'WARN';
  return 'PASS';
}

const headOnly = (r: Report) => r.sides.base === null;

/** One side alone has no classes to speak of: a case passes or fails. */
function caseLabel(c: CaseReport, r: Report): string {
  if (!headOnly(r)) return c.class;
  if (c.class === 'incomplete') return 'incomplete';
  return c.head && c.head.passes === c.head.runs ? 'pass' : 'fail';
}

const FILTERS: [string, string, (c: CaseReport, v: string) => boolean][] = [
  ['all', 'All', () => true],
  ['blocking', 'Blocking', (_c, v) => v === 'BLOCK'],
  ['warning', 'Warning', (_c, v) => v === 'WARN'],
  ['changed', 'Changed', (c) => c.class !== 'unchanged'],
  [
    'still-failing',
    'Still failing',
    (c) => c.class === 'unchanged' && !!c.head && c.head.passes < c.head.runs,
  ],
  ['flaky', 'Flaky', (c) => c.flaky.base || c.flaky.head],
];

function header(r: Report, data: ViewerData): HTMLElement {
  const side = (s: 'base' | 'head') => {
    const x = r.sides[s];
    return x
      ? `${x.ref}${x.sha ? ` (${x.sha.slice(0, 12)})` : ''}${x.dirty ? ', uncommitted changes' : ''}`
      : 'none';
  };
  const facts: [string, string | undefined][] = [
    ['base', side('base')],
    ['head', side('head')],
    ['engine', `${r.engine}${r.engine_reason ? `: ${r.engine_reason}` : ''}`],
    [
      'repeats',
      r.repeats_policy
        ? `${r.repeats_policy.min} to ${r.repeats_policy.max} (adaptive)`
        : r.repeats !== undefined
          ? String(r.repeats)
          : undefined,
    ],
    ['started', r.started_at],
    ['duration', r.duration_ms !== undefined ? `${(r.duration_ms / 1000).toFixed(1)} s` : undefined],
    ['policy from', r.policy_from ? `${r.policy_from.side}: ${r.policy_from.reason}` : undefined],
    [
      'agent isolation',
      r.agent_isolation ? `${r.agent_isolation.mode}: ${r.agent_isolation.note}` : undefined,
    ],
    ['suite hash', r.pin.suite_hash],
    ['shard', r.shard ? `${r.shard.index}/${r.shard.total}` : undefined],
    [
      'files',
      `${data.files.report}${data.files.episodes ? `, ${data.files.episodes}` : ' (no episodes file: repeats not shown)'}`,
    ],
  ];
  const reasons = r.gate_reasons ?? [];
  const changes = r.suite_changes ?? [];
  return h(
    'header',
    null,
    h(
      'h1',
      null,
      'Stategate ',
      h('span', { class: `verdict v-${r.verdict}`, 'data-verdict': r.verdict }, r.verdict),
    ),
    r.interrupted
      ? h('p', { class: 'fail' }, 'The run was interrupted: cases it did not finish are incomplete.')
      : null,
    r.unverified ? h('p', { class: 'fail' }, `Unverified: ${r.unverified.reason}`) : null,
    reasons.length > 0
      ? h(
          'ul',
          { class: 'reasons' },
          reasons.map((x) => h('li', null, h('strong', null, x.verdict), ' ', reasonText(r, x))),
        )
      : null,
    changes.length > 0
      ? h(
          'section',
          { class: 'suite-changes' },
          h('h2', null, 'Suite changes'),
          h(
            'ul',
            null,
            changes.map((x) =>
              h('li', x.weakens ? { class: 'weakens' } : null, x.weakens ? 'weakens: ' : '', x.text),
            ),
          ),
        )
      : null,
    h('h2', null, 'Run'),
    h(
      'table',
      { class: 'facts' },
      facts
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => h('tr', null, h('th', null, k), h('td', null, v as string))),
    ),
  );
}

function boot(): void {
  const app = document.getElementById('app') as HTMLElement;
  const block = document.getElementById('stategate-data');
  const data = JSON.parse(block?.textContent ?? 'null') as ViewerData;
  const r = data.report;
  const gate = r.gate ?? DEFAULT_GATE;
  const verdicts = new Map(r.cases.map((c) => [c.id, caseVerdict(c, gate)]));
  let filter = 'all';
  let cls = '';
  let verdict = '';
  let query = '';

  const buttons = FILTERS.map(([key, label]) => {
    const b = h(
      'button',
      { type: 'button', 'data-filter': key, 'aria-pressed': String(key === filter) },
      label,
    );
    b.addEventListener('click', () => {
      filter = key;
      for (const x of buttons) x.setAttribute('aria-pressed', String(x === b));
      list();
    });
    return b;
  });
  const labels = [...new Set(r.cases.map((c) => caseLabel(c, r)))].sort();
  const classSelect = h(
    'select',
    { 'aria-label': headOnly(r) ? 'result' : 'class', 'data-filter-class': '' },
    h('option', { value: '' }, headOnly(r) ? 'any result' : 'any class'),
    labels.map((l) => h('option', { value: l }, l)),
  );
  classSelect.addEventListener('change', () => {
    cls = (classSelect as HTMLSelectElement).value;
    list();
  });
  const verdictSelect = h(
    'select',
    { 'aria-label': 'verdict', 'data-filter-verdict': '' },
    h('option', { value: '' }, 'any verdict'),
    ['BLOCK', 'WARN', 'PASS'].map((v) => h('option', { value: v }, v)),
  );
  verdictSelect.addEventListener('change', () => {
    verdict = (verdictSelect as HTMLSelectElement).value;
    list();
  });
  const search = h('input', {
    type: 'search',
    placeholder: 'search cases',
    'aria-label': 'search',
  }) as HTMLInputElement;
  search.addEventListener('input', () => {
    query = search.value.toLowerCase();
    list();
  });
  const count = h('span', { class: 'muted small', 'data-count': '' });
  const table = h('table', { class: 'cases' });

  const matches = (c: CaseReport) => {
    const v = verdicts.get(c.id) as string;
    const f = FILTERS.find(([k]) => k === filter);
    if (f && !f[2](c, v)) return false;
    if (cls && caseLabel(c, r) !== cls) return false;
    if (verdict && v !== verdict) return false;
    if (!query) return true;
    const text = [
      c.id,
      c.description,
      c.class,
      c.reason,
      c.divergence?.sentence,
      ...(c.expectations_changed ?? []).map((x) => `${x.id} ${x.message ?? ''}`),
    ]
      .join('\n')
      .toLowerCase();
    return text.includes(query);
  };

  function list(): void {
    const shown = r.cases.filter(matches);
    count.textContent = `${shown.length} of ${r.cases.length} cases`;
    const rows: HTMLElement[] = [];
    for (const c of shown) {
      const v = verdicts.get(c.id) as string;
      const flaky = [c.flaky.base ? 'base' : '', c.flaky.head ? 'head' : ''].filter(Boolean).join(', ');
      const tr = h(
        'tr',
        { class: 'case', 'data-case': c.id },
        h('td', null, h('span', { class: `verdict v-${v} small` }, v)),
        h('td', { class: 'mono' }, c.id),
        h('td', null, caseLabel(c, r)),
        h('td', null, c.base ? `${c.base.passes}/${c.base.runs}` : '—'),
        h('td', null, c.head ? `${c.head.passes}/${c.head.runs}` : '—'),
        h('td', null, flaky),
      );
      const detail = h('td', { colspan: '6', class: 'detail' });
      const holder = h('tr', { class: 'case-detail', 'data-detail': c.id }, detail);
      holder.hidden = true;
      tr.addEventListener('click', () => {
        holder.hidden = !holder.hidden;
        tr.classList.toggle('open', !holder.hidden);
        // Rendered on first open, so a page with thousands of cases loads only the list.
        if (!holder.hidden && detail.childElementCount === 0) renderCase(detail, c, data);
      });
      rows.push(tr, holder);
    }
    replace(
      table,
      h(
        'tr',
        null,
        ['verdict', 'case', headOnly(r) ? 'result' : 'class', 'base passed', 'head passed', 'flaky'].map(
          (t) => h('th', null, t),
        ),
      ),
      rows,
    );
  }

  replace(
    app,
    header(r, data),
    h('h2', null, 'Cases'),
    h('div', { class: 'filters' }, buttons, classSelect, verdictSelect, search, count),
    table,
  );
  list();
  // `report.html#case=ID` opens that case: a link a reviewer can paste.
  let wanted = '';
  try {
    wanted = location.hash.startsWith('#case=') ? decodeURIComponent(location.hash.slice(6)) : '';
  } catch {
    wanted = '';
  }
  if (wanted)
    for (const tr of table.querySelectorAll<HTMLElement>('tr.case'))
      if (tr.dataset.case === wanted) tr.click();
}

if (typeof document !== 'undefined') boot();
