// Every difference between the base's suite and the suite that ran (report.json `suite_changes`):
// scenarios, their expectations, faults, tools, state and input; twins; schema and fixtures; the
// gate lists, repeats, judge and the database (engine, url, image, expose). Pure: a function of two loaded suites. An entry
// `weakens` when it lets through an episode the base's suite would have failed, or when the gate
// cannot show it does not.
import type { Expectation, Scenario, StategateConfig, Tool } from '../config/schema.js';
import type { Suite } from '../config/suite.js';
import { canonicalJson } from '../model/canonical-json.js';
import type { SuiteChange } from '../model/report.js';
import { diffExpectation } from './expectation-changes.js';

/** What the diff reads of a suite. */
export type SuiteShape = Pick<Suite, 'config' | 'scenarios' | 'tools' | 'template' | 'files'>;

/** The differences from `base` to `head`, weakening ones first within each part, in a stable order. */
export function diffSuites(base: SuiteShape, head: SuiteShape): SuiteChange[] {
  return [
    ...scenarioChanges(base.scenarios, head.scenarios),
    ...twinChanges(base.tools, head.tools, openScenarios(base.scenarios, head.scenarios)),
    ...templateChanges(base, head),
    ...policyChanges(base.config, head.config),
  ];
}

/** The entries that weaken the suite. */
export function weakenings(changes: readonly SuiteChange[] | undefined): SuiteChange[] {
  return (changes ?? []).filter((c) => c.weakens);
}

const same = (a: unknown, b: unknown) => canonicalJson(a ?? null) === canonicalJson(b ?? null);

function byId<T>(items: Iterable<T>, id: (t: T) => string): Map<string, T> {
  const out = new Map<string, T>();
  for (const item of items) if (!out.has(id(item))) out.set(id(item), item);
  return out;
}

function sortedKeys(...maps: Map<string, unknown>[]): string[] {
  return [...new Set(maps.flatMap((m) => [...m.keys()]))].sort();
}

function scenarioChanges(base: Scenario[], head: Scenario[]): SuiteChange[] {
  const b = byId(base, (s) => s.id);
  const h = byId(head, (s) => s.id);
  const out: SuiteChange[] = [];
  for (const id of sortedKeys(b, h)) {
    const bs = b.get(id);
    const hs = h.get(id);
    if (bs && !hs) {
      out.push({ kind: 'scenario-removed', subject: id, weakens: true, text: `scenario ${id} removed` });
    } else if (!bs && hs) {
      out.push({ kind: 'scenario-added', subject: id, weakens: false, text: `scenario ${id} added` });
    } else if (bs && hs) {
      out.push(...scenarioEdits(bs, hs));
    }
  }
  return out;
}

function scenarioEdits(b: Scenario, h: Scenario): SuiteChange[] {
  const out: SuiteChange[] = [];
  const edit = (weakens: boolean, what: string) =>
    out.push({ kind: 'scenario-edited', subject: b.id, weakens, text: `scenario ${b.id}: ${what}` });

  const be = byId<Expectation>(b.expect, (e) => e.id);
  const he = byId<Expectation>(h.expect, (e) => e.id);
  for (const id of sortedKeys(be, he)) {
    const x = be.get(id);
    const y = he.get(id);
    if (x && !y) edit(true, `expectation ${id} removed`);
    else if (!x && y) edit(false, `expectation ${id} added`);
    else if (x && y) {
      const d = diffExpectation(x, y);
      if (d.loosened.length > 0) edit(true, `expectation ${id} loosened: ${d.loosened.join(', ')}`);
      if (d.tightened.length > 0) edit(false, `expectation ${id} tightened: ${d.tightened.join(', ')}`);
    }
  }

  // A fault rule is kept only when the head has the very same rule; any other edit removes what it tested.
  const bFaults = b.faults.map((f) => canonicalJson(f));
  const hFaults = h.faults.map((f) => canonicalJson(f));
  const removed = b.faults.filter((_, i) => !hFaults.includes(bFaults[i]));
  const added = h.faults.filter((_, i) => !bFaults.includes(hFaults[i]));
  const on = (f: (typeof b.faults)[number]) => ('model' in f ? `model ${f.model}` : f.tool);
  for (const f of removed) edit(true, `fault ${f.fault} on ${on(f)} removed or changed`);
  for (const f of added) edit(false, `fault ${f.fault} on ${on(f)} added`);

  if (!same(b.tools, h.tools)) {
    const list = (t: string[] | undefined) => (t ? t.join(', ') || 'none' : 'all');
    edit(true, `allowed tools changed from ${list(b.tools)} to ${list(h.tools)}`);
  }
  // A new initial state or message can make every expectation hold without the agent doing anything.
  if (!same(b.state, h.state)) edit(true, 'initial state changed');
  if (!same(b.input, h.input)) edit(true, 'input changed');
  // An ignored column's differences leave the state diff: ignoring one more can hide what the head changed.
  const { added: ia, dropped: id } = ignoreChanges(b.ignore_columns, h.ignore_columns);
  if (ia.length > 0) edit(true, `ignore_columns now also ignores ${ia.join(', ')}`);
  if (id.length > 0) edit(false, `ignore_columns no longer ignores ${id.join(', ')}`);
  return out;
}

/** Scenarios in both suites whose head copy lists no `tools:`, so its agent may call any tool. */
function openScenarios(base: Scenario[], head: Scenario[]): string[] {
  const b = byId(base, (s) => s.id);
  return head
    .filter((s) => b.has(s.id) && s.tools === undefined)
    .map((s) => s.id)
    .sort();
}

function twinChanges(base: Map<string, Tool>, head: Map<string, Tool>, open: string[]): SuiteChange[] {
  const out: SuiteChange[] = [];
  for (const name of sortedKeys(base, head)) {
    const b = base.get(name);
    const h = head.get(name);
    if (b && !h)
      out.push({ kind: 'twin-removed', subject: name, weakens: true, text: `twin tool ${name} removed` });
    else if (!b && h) {
      // An agent of a scenario the base already had can call the new tool: its SQL can do what a
      // forbidden tool does under a name `tool_not_called` does not know, or write what no
      // expectation of the base's scenario looks for.
      const weakens = open.length > 0;
      const why = weakens
        ? open.length === 1
          ? ` (scenario ${open[0]} lists no tools:, so its agent can call it in place of the base's tools)`
          : ` (scenarios ${open[0]} and ${open.length - 1} more list no tools:, so their agents can call it in place of the base's tools)`
        : '';
      out.push({ kind: 'twin-added', subject: name, weakens, text: `twin tool ${name} added${why}` });
    } else if (b && h) {
      const fields = [...new Set([...Object.keys(b), ...Object.keys(h)])]
        .filter((k) => k !== 'file' && k !== 'name' && !same(b[k as keyof Tool], h[k as keyof Tool]))
        .sort();
      // What a tool does is what the episodes record: any edit to it can hide an effect.
      if (fields.length > 0)
        out.push({
          kind: 'twin-changed',
          subject: name,
          weakens: true,
          text: `twin tool ${name} changed (${fields.join(', ')})`,
        });
    }
  }
  return out;
}

function templateChanges(base: SuiteShape, head: SuiteShape): SuiteChange[] {
  const out: SuiteChange[] = [];
  const part = (kind: 'schema-changed' | 'fixtures-changed', word: string, b: string[], h: string[]) => {
    const text = (s: SuiteShape, f: string) => s.files[f] ?? '';
    const bodies = (s: SuiteShape, list: string[]) => list.map((f) => [f, text(s, f)]);
    if (same(bodies(base, b), bodies(head, h))) return;
    const changed = [...new Set([...b, ...h])]
      .filter((f) => !b.includes(f) || !h.includes(f) || text(base, f) !== text(head, f))
      .sort();
    const what = changed.length > 0 ? changed.join(', ') : 'order of files';
    // The template is what every expectation reads: a dropped constraint or row can hide an effect.
    out.push({ kind, subject: word, weakens: true, text: `${word} changed: ${what}` });
  };
  part(
    'schema-changed',
    'schema',
    base.template.schema.map((s) => s.file),
    head.template.schema.map((s) => s.file),
  );
  part(
    'fixtures-changed',
    'fixtures',
    base.template.fixtures.map((f) => f.file),
    head.template.fixtures.map((f) => f.file),
  );
  return out;
}

/** `table.column` the head ignores that the base does not, and the reverse, sorted. */
function ignoreChanges(
  base: StategateConfig['ignore_columns'],
  head: StategateConfig['ignore_columns'],
): { added: string[]; dropped: string[] } {
  const flat = (list: StategateConfig['ignore_columns']) =>
    new Set(Object.entries(list ?? {}).flatMap(([t, cs]) => cs.map((c) => `${t}.${c}`)));
  const b = flat(base);
  const h = flat(head);
  return { added: [...h].filter((x) => !b.has(x)).sort(), dropped: [...b].filter((x) => !h.has(x)).sort() };
}

function policyChanges(base: StategateConfig, head: StategateConfig): SuiteChange[] {
  const out: SuiteChange[] = [];
  const ignore = ignoreChanges(base.ignore_columns, head.ignore_columns);
  if (ignore.added.length > 0)
    out.push({
      kind: 'ignore-columns-changed',
      subject: 'ignore_columns',
      weakens: true,
      text: `ignore_columns now also ignores ${ignore.added.join(', ')}`,
    });
  if (ignore.dropped.length > 0)
    out.push({
      kind: 'ignore-columns-changed',
      subject: 'ignore_columns',
      weakens: false,
      text: `ignore_columns no longer ignores ${ignore.dropped.join(', ')}`,
    });
  for (const level of ['block', 'warn'] as const) {
    const b = base.gate[level];
    const h = head.gate[level];
    const dropped = b.filter((c) => !h.includes(c));
    const added = h.filter((c) => !b.includes(c));
    const subject = `gate.${level}`;
    if (dropped.length > 0)
      out.push({
        kind: 'gate-changed',
        subject,
        weakens: true,
        text: `gate.${level} no longer lists ${dropped.join(', ')}`,
      });
    if (added.length > 0)
      out.push({
        kind: 'gate-changed',
        subject,
        weakens: false,
        text: `gate.${level} now lists ${added.join(', ')}`,
      });
  }
  const br = repeatsRange(base.repeats);
  const hr = repeatsRange(head.repeats);
  if (br.min !== hr.min || br.max !== hr.max) {
    const weakens = hr.min < br.min || hr.max < br.max;
    out.push({
      kind: 'repeats-changed',
      subject: 'repeats',
      weakens,
      text: `repeats ${weakens ? 'lowered' : 'changed'} from ${repeatsWords(base.repeats)} to ${repeatsWords(head.repeats)}`,
    });
  }
  if (base.database.expose !== head.database.expose) {
    // An agent with its own database URL can write the state the expectations read.
    const weakens = head.database.expose;
    const text = `database.expose ${weakens ? 'turned on: the agent can write its database directly' : 'turned off'}`;
    out.push({ kind: 'database-changed', subject: 'database.expose', weakens, text });
  }
  // The database server decides what every expectation reads; a URL may hold a password, so it is not shown.
  const bd = base.database;
  const hd = head.database;
  if (bd.engine !== hd.engine)
    out.push({
      kind: 'database-changed',
      subject: 'database.engine',
      weakens: true,
      text: `database.engine changed from ${bd.engine} to ${hd.engine}`,
    });
  for (const key of ['url', 'image'] as const) {
    if (bd[key] !== hd[key])
      out.push({
        kind: 'database-changed',
        subject: `database.${key}`,
        weakens: true,
        text: `database.${key} changed`,
      });
  }
  const bj = base.judge;
  const hj = head.judge;
  if (bj && hj) {
    // Another model or endpoint grades the judge criteria: the base's calibration does not carry over.
    for (const key of ['url', 'model'] as const) {
      if (bj[key] !== hj[key])
        out.push({
          kind: 'judge-changed',
          subject: `judge.${key}`,
          weakens: true,
          text: `judge.${key} changed`,
        });
    }
  } else if (bj && !hj) {
    out.push({ kind: 'judge-changed', subject: 'judge', weakens: true, text: 'judge section removed' });
  } else if (!bj && hj) {
    out.push({ kind: 'judge-changed', subject: 'judge', weakens: false, text: 'judge section added' });
  }
  out.push(...modelChanges(base, head));
  return out;
}

/**
 * Changes to `models` and `budget`. Where a provider's key goes (url, api, api_key_env) weakens: a
 * head that sends a key elsewhere must be seen, though under base policy the base's entries run.
 */
function modelChanges(base: StategateConfig, head: StategateConfig): SuiteChange[] {
  const out: SuiteChange[] = [];
  const bm = base.models ?? {};
  const hm = head.models ?? {};
  for (const name of new Set([...Object.keys(bm), ...Object.keys(hm)])) {
    const b = Object.hasOwn(bm, name) ? bm[name] : undefined;
    const h = Object.hasOwn(hm, name) ? hm[name] : undefined;
    const subject = `models.${name}`;
    if (!h) out.push({ kind: 'models-changed', subject, weakens: false, text: `models.${name} removed` });
    else if (!b) out.push({ kind: 'models-changed', subject, weakens: true, text: `models.${name} added` });
    else {
      for (const key of ['api', 'url', 'api_key_env'] as const)
        if (b[key] !== h[key])
          out.push({
            kind: 'models-changed',
            subject: `${subject}.${key}`,
            weakens: true,
            text: `models.${name}.${key} changed`,
          });
      if (canonicalJson(b.prices) !== canonicalJson(h.prices))
        out.push({
          kind: 'models-changed',
          subject: `${subject}.prices`,
          weakens: false,
          text: `models.${name}.prices changed`,
        });
    }
  }
  for (const key of ['run_usd', 'episode_usd'] as const) {
    const b = base.budget?.[key];
    const h = head.budget?.[key];
    if (b === h) continue;
    const raised = b !== undefined && (h === undefined || h > b);
    const words = (v: number | undefined) => (v === undefined ? 'none' : `${v} USD`);
    out.push({
      kind: 'models-changed',
      subject: `budget.${key}`,
      weakens: raised,
      text: `budget.${key} changed from ${words(b)} to ${words(h)}`,
    });
  }
  return out;
}

/** Repeats as a range: a fixed number N is {N, N}. */
export function repeatsRange(r: StategateConfig['repeats']): { min: number; max: number } {
  return typeof r === 'number' ? { min: r, max: r } : { min: r.min, max: r.max };
}

function repeatsWords(r: StategateConfig['repeats']): string {
  return typeof r === 'number' ? String(r) : `{min: ${r.min}, max: ${r.max}}`;
}

/**
 * The head's repeats raised to the base's floor: neither the fewest nor the most repeats a case may get
 * goes below the base's. A fixed count below an adaptive base's maximum becomes that range.
 */
export function repeatsWithFloor(
  head: StategateConfig['repeats'],
  base: StategateConfig['repeats'],
): StategateConfig['repeats'] {
  const b = repeatsRange(base);
  const h = repeatsRange(head);
  if (h.min >= b.min && h.max >= b.max) return head;
  if (typeof base === 'number' && typeof head === 'number') return base;
  const min = Math.max(h.min, b.min);
  return { min, max: Math.max(h.max, b.max, min) };
}
