// How one expectation changed between the base's scenario and the head's, read from the parameter
// roles its kind declares (expectations/params.ts). Only an edit that provably narrows the
// expectation is tightening; anything the gate cannot show to be at least as strict (a rewritten
// query, a changed value, a filter that counts fewer calls under an upper bound) loosens it: a
// reviewer must look at it.
import type { Expectation } from '../config/schema.js';
import type { Param, Params } from '../expectations/params.js';
import { expectationKind, kindOf } from '../expectations/registry.js';
import { canonicalJson } from '../model/canonical-json.js';

/** What differs between two versions of one expectation. */
export interface ExpectationDiff {
  /** Phrases for the edits that loosen it, e.g. `equals dropped`, `max_tool_calls raised from 6 to 20`. */
  loosened: string[];
  /** Phrases for the edits that provably keep it as strict or stricter. */
  tightened: string[];
}

type Fields = Record<string, unknown>;

const same = (a: unknown, b: unknown) => canonicalJson(a ?? null) === canonicalJson(b ?? null);
const show = (v: unknown) => {
  const text = typeof v === 'string' ? v : canonicalJson(v);
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
};
const isMapping = (v: unknown): v is Fields => typeof v === 'object' && v !== null && !Array.isArray(v);

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
  diffFields(kindOf(base).params, base as Fields, head as Fields, '', out);
  return out;
}

function diffFields(params: Params, b: Fields, h: Fields, prefix: string, out: ExpectationDiff): void {
  for (const [name, param] of Object.entries(params)) {
    const label = `${prefix}${name}`;
    if (param.role === 'filter') diffFilter(params, name, param, b, h, label, prefix, out);
    else diffParam(param, b[name], h[name], label, out);
  }
}

function diffParam(param: Param, bv: unknown, hv: unknown, label: string, out: ExpectationDiff): void {
  if (param.role === 'loosens-when-on') {
    if (!bv && hv) out.loosened.push(`${label} added`);
    if (bv && !hv) out.tightened.push(`${label} dropped`);
    return;
  }
  if (param.role === 'fields' && isMapping(bv) && isMapping(hv)) {
    diffFields(param.fields, bv, hv, `${label}.`, out);
    return;
  }
  if (param.role === 'ordered') {
    const level = (v: unknown) => param.levels.indexOf(typeof v === 'string' ? v : param.default);
    const [from, to] = [level(bv), level(hv)];
    if (from === to) return;
    const text = `${label} changed from ${show(bv ?? param.default)} to ${show(hv ?? param.default)}`;
    // An unknown level (-1) is no provable narrowing.
    if (from >= 0 && to > from) out.tightened.push(text);
    else out.loosened.push(text);
    return;
  }
  if (param.role === 'exact' && param.sql && typeof bv === 'string' && typeof hv === 'string') {
    if (bv.trim() !== hv.trim()) out.loosened.push(`${label} changed`);
    return;
  }
  if (same(bv, hv)) return;
  // Every parameter but a switch is a requirement when given: adding one narrows, dropping one widens.
  if (hv === undefined) out.loosened.push(`${label} dropped`);
  else if (bv === undefined) out.tightened.push(`${label} added`);
  else if (
    (param.role === 'at-least' || param.role === 'at-most') &&
    typeof bv === 'number' &&
    typeof hv === 'number'
  )
    bound(label, bv, hv, param.role === 'at-least' ? 'min' : 'max', out);
  else if (param.role === 'any-of' && Array.isArray(bv) && Array.isArray(hv)) widened(label, bv, hv, out);
  else if (param.role === 'all-of' && Array.isArray(bv) && Array.isArray(hv)) narrowed(label, bv, hv, out);
  else out.loosened.push(`${label} changed from ${show(bv)} to ${show(hv)}`);
}

/** How the head's filter compares with the base's: the head counts the same, fewer or more items, or other ones. */
function filterRelation(b: unknown, h: unknown): 'same' | 'fewer' | 'more' | 'other' {
  const bf = isMapping(b) ? b : {};
  const hf = isMapping(h) ? h : {};
  const keeps = (from: Fields, to: Fields) => Object.keys(from).every((k) => k in to && same(from[k], to[k]));
  const headKeepsBase = keeps(bf, hf);
  const baseKeepsHead = keeps(hf, bf);
  if (headKeepsBase && baseKeepsHead) return 'same';
  if (headKeepsBase) return 'fewer';
  if (baseKeepsHead) return 'more';
  return 'other';
}

/**
 * A filter edit is provably stricter only for the bounds it cannot break: counting fewer items keeps
 * a lower bound true of all of them and breaks an upper or exact one; counting more keeps an upper
 * bound and breaks a lower one above zero. The counted bounds themselves are compared on their own.
 */
function diffFilter(
  params: Params,
  name: string,
  param: Extract<Param, { role: 'filter' }>,
  b: Fields,
  h: Fields,
  label: string,
  prefix: string,
  out: ExpectationDiff,
): void {
  const relation = filterRelation(b[name], h[name]);
  if (relation === 'same') return;
  const broken = param.counts.filter((count) => {
    const v = b[count];
    if (v === undefined) return false;
    const role = params[count]?.role;
    const vacuousFloor = typeof v === 'number' && v <= 0;
    if (relation === 'fewer') return role !== 'at-least';
    if (relation === 'more') return role === 'at-most' ? false : !vacuousFloor;
    return !(role === 'at-least' && vacuousFloor);
  });
  const what = relation === 'fewer' ? 'narrowed' : relation === 'more' ? 'widened' : 'changed';
  if (broken.length === 0) {
    out.tightened.push(`${label} ${what}`);
    return;
  }
  const bounds = broken.map((c) => `${prefix}${c}`).join(', ');
  if (relation === 'fewer') {
    out.loosened.push(`${label} narrowed: ${param.items} it leaves out no longer count against ${bounds}`);
  } else if (relation === 'more') {
    const bf = isMapping(b[name]) ? (b[name] as Fields) : {};
    const hf = isMapping(h[name]) ? (h[name] as Fields) : {};
    const lost = Object.keys(bf).filter((k) => !(k in hf) || !same(bf[k], hf[k]));
    out.loosened.push(`${label} no longer require ${lost.join(', ')} as before`);
  } else {
    out.loosened.push(`${label} changed from ${show(b[name] ?? {})} to ${show(h[name] ?? {})}`);
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
function narrowed(label: string, b: unknown[], h: unknown[], out: ExpectationDiff): void {
  const hs = new Set(h.map((v) => canonicalJson(v)));
  const bs = new Set(b.map((v) => canonicalJson(v)));
  const removed = b.filter((v) => !hs.has(canonicalJson(v)));
  if (removed.length > 0) out.loosened.push(`${label} no longer lists ${removed.map(show).join(', ')}`);
  else if (h.some((v) => !bs.has(canonicalJson(v)))) out.tightened.push(`${label} extended`);
}

/** A numeric bound: a `max` raised or a `min` lowered loosens. */
function bound(label: string, b: number, h: number, which: 'min' | 'max', out: ExpectationDiff): void {
  if (b === h) return;
  const looser = which === 'max' ? h > b : h < b;
  out[looser ? 'loosened' : 'tightened'].push(`${label} ${h > b ? 'raised' : 'lowered'} from ${b} to ${h}`);
}
