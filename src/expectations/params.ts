// How each parameter of an expectation kind moves what the expectation lets through, declared beside
// the kind's schema. The suite-changes classifier reads these declarations: an edit of an existing
// expectation counts as tightening only when every changed parameter provably narrows it
// (docs/formats/stategate.md), so a role says which direction of change narrows.

/** The role of one parameter: which edits of it narrow the expectation and which widen it. */
export type Param =
  /** A value the check is about (a tool, a table, an expected value): any other value is another check. */
  | { role: 'exact'; sql?: true }
  /** A lower bound: raised narrows, lowered widens. */
  | { role: 'at-least' }
  /** An upper bound: lowered narrows, raised widens. */
  | { role: 'at-most' }
  /** A list of what must all hold (ops forbidden, tools called before): items added narrow, removed widen. */
  | { role: 'all-of' }
  /** A list of what is allowed (tables that may change, values `in`): items removed narrow, added widen. */
  | { role: 'any-of' }
  /** A switch that lets more through when on (`loose`). */
  | { role: 'loosens-when-on' }
  /**
   * Values every counted item must match (`tool_called.args`, `changes.where`): more of them count
   * fewer items, which keeps a lower bound on the count provable and breaks an upper one.
   */
  | { role: 'filter'; counts: readonly string[]; items: string }
  /**
   * A choice among levels each at least as strict as the one before (`turn: any | final | all`):
   * a move to a later level narrows, to an earlier one widens; absent, it is `default`.
   */
  | { role: 'ordered'; levels: readonly string[]; default: string }
  /** A mapping of parameters of its own; a value that is not a mapping (`outcome_verified: true`) is exact. */
  | { role: 'fields'; fields: Params };

/** The parameters of a kind (or of one of its mappings), by field name. */
export type Params = Readonly<Record<string, Param>>;

/** Any other value is another check. */
export const EXACT: Param = { role: 'exact' };
/** SQL text: compared without its surrounding whitespace, and not quoted back in the change's text. */
export const SQL: Param = { role: 'exact', sql: true };
export const AT_LEAST: Param = { role: 'at-least' };
export const AT_MOST: Param = { role: 'at-most' };
export const ALL_OF: Param = { role: 'all-of' };
export const ANY_OF: Param = { role: 'any-of' };
export const LOOSENS_WHEN_ON: Param = { role: 'loosens-when-on' };

/** A filter on the items the sibling parameters `counts` count (`items` names them in messages). */
export function filter(counts: readonly string[], items: string): Param {
  return { role: 'filter', counts, items };
}

/** Levels from the loosest to the strictest, and the one an absent value means. */
export function ordered(levels: readonly string[], fallback: string): Param {
  return { role: 'ordered', levels, default: fallback };
}

/** A mapping of parameters. */
export function fields(params: Params): Param {
  return { role: 'fields', fields: params };
}
