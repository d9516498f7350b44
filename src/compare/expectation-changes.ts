// How one expectation changed between the base's scenario and the head's: which edits let through
// an episode the base's version would have failed. Anything the gate cannot show to be at least as
// strict (a rewritten query, a changed value) counts as loosening: a reviewer must look at it.

import { COMPARATOR_NAMES, type Expectation, expectationKind, type QueryCheck } from '../config/schema.js';
import { canonicalJson } from '../model/canonical-json.js';

/** What differs between two versions of one expectation. */
export interface ExpectationDiff {
  /** Phrases for the edits that loosen it, e.g. `equals dropped`, `max_tool_calls raised from 6 to 20`. */
  loosened: string[];
  /** Phrases for the edits that keep it as strict or stricter. */
  tightened: string[];
}

const same = (a: unknown, b: unknown) => canonicalJson(a ?? null) === canonicalJson(b ?? null);
const show = (v: unknown) => {
  const text = typeof v === 'string' ? v : canonicalJson(v);
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
};

/** Compares two versions of an expectation with the same id. */
export function diffExpectation(base: Expectation, head: Expectation): ExpectationDiff {
  const out: ExpectationDiff = { loosened: [], tightened: [] };
  if (base.critical && !head.critical) out.loosened.push('no longer critical');
  if (!base.critical && head.critical) out.tightened.push('now critical');
  const kind = expectationKind(base);
  if (expectationKind(head) !== kind) {
    out.loosened.push(`kind changed from ${kind} to ${expectationKind(head)}`);
    return out;
  }
  const b = base as Record<string, unknown>;
  const h = head as Record<string, unknown>;
  switch (kind) {
    case 'query':
      queryCheck(b as QueryCheck, h as QueryCheck, '', out);
      break;
    case 'outcome_verified':
      if (b.outcome_verified === true || h.outcome_verified === true) {
        if (!same(b.outcome_verified, h.outcome_verified)) out.loosened.push('outcome_verified changed');
      } else
        queryCheck(
          b.outcome_verified as QueryCheck,
          h.outcome_verified as QueryCheck,
          'outcome_verified ',
          out,
        );
      break;
    case 'changes':
      changesCheck(b.changes as Record<string, unknown>, h.changes as Record<string, unknown>, out);
      break;
    case 'only_changes':
      widened('only_changes', b.only_changes as string[], h.only_changes as string[], out);
      break;
    case 'forbid_changes': {
      const bf = b.forbid_changes as { table: string; ops: string[] };
      const hf = h.forbid_changes as { table: string; ops: string[] };
      if (bf.table !== hf.table)
        out.loosened.push(`forbid_changes table changed from ${bf.table} to ${hf.table}`);
      else narrowed('forbid_changes.ops', bf.ops, hf.ops, out);
      break;
    }
    case 'tool_called':
      toolCalled(b.tool_called as ToolCalled, h.tool_called as ToolCalled, out);
      break;
    case 'order': {
      const bo = b.order as { before: string; must_call: string[] };
      const ho = h.order as { before: string; must_call: string[] };
      if (bo.before !== ho.before)
        out.loosened.push(`order.before changed from ${bo.before} to ${ho.before}`);
      else narrowed('order.must_call', bo.must_call, ho.must_call, out);
      break;
    }
    case 'max_tool_calls':
    case 'max_retries':
      bound(kind, b[kind] as number, h[kind] as number, 'max', out);
      break;
    case 'judge': {
      const bj = b.judge as { criterion: string; threshold: number };
      const hj = h.judge as { criterion: string; threshold: number };
      if (bj.criterion !== hj.criterion) out.loosened.push('judge criterion changed');
      bound('judge.threshold', bj.threshold, hj.threshold, 'min', out);
      break;
    }
    default:
      // tool_not_called, no_duplicate_effect, outcome, reply_*: one value, any change is another check.
      if (!same(b[kind], h[kind]))
        out.loosened.push(`${kind} changed from ${show(b[kind])} to ${show(h[kind])}`);
  }
  return out;
}

type ToolCalled = { tool: string; min: number; max?: number; args?: Record<string, unknown> };

function toolCalled(b: ToolCalled, h: ToolCalled, out: ExpectationDiff): void {
  if (b.tool !== h.tool) {
    out.loosened.push(`tool_called.tool changed from ${b.tool} to ${h.tool}`);
    return;
  }
  bound('tool_called.min', b.min, h.min, 'min', out);
  if (b.max !== undefined && h.max === undefined) out.loosened.push('tool_called.max dropped');
  else if (b.max === undefined && h.max !== undefined) out.tightened.push('tool_called.max added');
  else if (b.max !== undefined && h.max !== undefined) bound('tool_called.max', b.max, h.max, 'max', out);
  // Every argument the base required must still be required with the same value.
  const bArgs = b.args ?? {};
  const hArgs = h.args ?? {};
  const lost = Object.keys(bArgs).filter((k) => !(k in hArgs) || !same(bArgs[k], hArgs[k]));
  if (lost.length > 0) out.loosened.push(`tool_called.args no longer require ${lost.join(', ')} as before`);
  else if (!same(bArgs, hArgs)) out.tightened.push('tool_called.args narrowed');
}

function changesCheck(b: Record<string, unknown>, h: Record<string, unknown>, out: ExpectationDiff): void {
  if (b.table !== h.table) out.loosened.push(`changes.table changed from ${b.table} to ${h.table}`);
  for (const key of ['inserted', 'updated', 'deleted', 'where']) {
    if (same(b[key], h[key])) continue;
    if (b[key] === undefined) out[key === 'where' ? 'loosened' : 'tightened'].push(`changes.${key} added`);
    else if (h[key] === undefined) out.loosened.push(`changes.${key} dropped`);
    else out.loosened.push(`changes.${key} changed from ${show(b[key])} to ${show(h[key])}`);
  }
}

/** The query and comparators of a query check; every comparator must hold, so dropping one loosens. */
function queryCheck(b: QueryCheck, h: QueryCheck, prefix: string, out: ExpectationDiff): void {
  if (b.query.trim() !== h.query.trim()) out.loosened.push(`${prefix}query changed`);
  // loose lets values pass that only look like the expected ones.
  if (!b.loose && h.loose) out.loosened.push(`${prefix}loose added`);
  if (b.loose && !h.loose) out.tightened.push(`${prefix}loose dropped`);
  for (const name of COMPARATOR_NAMES) {
    const bv = b[name];
    const hv = h[name];
    if (bv === undefined && hv === undefined) continue;
    if (hv === undefined) {
      out.loosened.push(`${prefix}${name} dropped`);
      continue;
    }
    if (bv === undefined) {
      out.tightened.push(`${prefix}${name} added`);
      continue;
    }
    if (same(bv, hv)) continue;
    const label = `${prefix}${name}`;
    if (name === 'in') widened(label, bv as unknown[], hv as unknown[], out);
    else if ((name === 'gt' || name === 'gte') && typeof bv === 'number' && typeof hv === 'number')
      bound(label, bv, hv, 'min', out);
    else if ((name === 'lt' || name === 'lte') && typeof bv === 'number' && typeof hv === 'number')
      bound(label, bv, hv, 'max', out);
    else if (name === 'matches') out.loosened.push(`${label} changed from /${show(bv)}/ to /${show(hv)}/`);
    else out.loosened.push(`${label} changed from ${show(bv)} to ${show(hv)}`);
  }
}

/** A list that allows what it holds: anything new in the head's list widens it. */
function widened(label: string, b: unknown[], h: unknown[], out: ExpectationDiff): void {
  const bs = new Set(b.map((v) => canonicalJson(v)));
  const hs = new Set(h.map((v) => canonicalJson(v)));
  const added = h.filter((v) => !bs.has(canonicalJson(v)));
  if (added.length > 0) out.loosened.push(`${label} widened to allow ${added.map(show).join(', ')}`);
  else if (b.some((v) => !hs.has(canonicalJson(v)))) out.tightened.push(`${label} narrowed`);
}

/** A list that requires what it holds: anything missing from the head's list loosens it. */
function narrowed(label: string, b: string[], h: string[], out: ExpectationDiff): void {
  const removed = b.filter((v) => !h.includes(v));
  if (removed.length > 0) out.loosened.push(`${label} no longer lists ${removed.join(', ')}`);
  else if (h.some((v) => !b.includes(v))) out.tightened.push(`${label} extended`);
}

/** A numeric bound: a `max` raised or a `min` lowered loosens. */
function bound(label: string, b: number, h: number, which: 'min' | 'max', out: ExpectationDiff): void {
  if (b === h) return;
  const looser = which === 'max' ? h > b : h < b;
  out[looser ? 'loosened' : 'tightened'].push(`${label} ${h > b ? 'raised' : 'lowered'} from ${b} to ${h}`);
}
