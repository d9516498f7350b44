// The data report.html embeds: report.json as written, plus each case's episodes projected to what
// the page shows (calls, replies, stderr, row changes, results), every string cut so the file stays
// small with thousands of episodes. The page renders only this; the projection is pure.
import type { CallRecord, GradedEpisode, RowChange, Side } from '../../model/episode.js';
import type { Report } from '../../model/report.js';

/** Characters of one string value kept in the page (replies and stderr have their own limits). */
export const VALUE_CHARS = 600;
export const REPLY_CHARS = 4000;
export const STDERR_CHARS = 4000;
/** Items of one array, keys of one object, calls and row changes of one episode kept in the page. */
export const ITEMS = 50;

/** One call as the page shows it. */
export interface CallView {
  seq: number;
  tool: string;
  args: unknown;
  status: number;
  /** The error code the caller saw beside its status (`SLOT_TAKEN`). */
  code?: string;
  fault?: string;
  effect: 'applied' | 'replayed' | 'none';
  result?: unknown;
  /** Present when the call was cut off or failed inside the harness. */
  note?: string;
  /** The step (1-based) of an earlier applied call with the same effect: this one applied it again. */
  same_effect_as?: number;
}

/** What names a call's effect: its effect key, else its tool and canonical arguments. */
function effectOf(c: CallRecord): string {
  return c.effectKey ?? `${c.tool} ${JSON.stringify(c.args)}`;
}

/** One episode as the page shows it. */
export interface EpisodeView {
  episode: string;
  repeat: number;
  /** pass / fail, or error when it could not be graded for a reason outside the agent. */
  grade: 'pass' | 'fail' | 'error';
  outcome?: string;
  reply?: string;
  /** How the agent ended: `exit 0`, `exit 1`, `timed out after 30000 ms`, ... */
  ended: string;
  resultError?: string;
  stderr?: string;
  infraError?: string;
  results: {
    id: string;
    grade: 'pass' | 'fail' | 'error';
    critical: boolean;
    label?: string;
    message: string;
  }[];
  calls: CallView[];
  changes: RowChange[];
  /** Left out after ITEMS: calls, row changes. */
  cut?: { calls?: number; changes?: number };
  /** Conversation turns and model calls, when the record has them (shown as they are). */
  turns?: unknown[];
  model_calls?: unknown[];
}

export interface ViewerData {
  report: Report;
  /** By case id, each side's episodes in repeat order; absent when episodes.jsonl was not there. */
  episodes: Record<string, Partial<Record<Side, EpisodeView[]>>> | null;
  /** report.json's name beside the page, and the episodes file. */
  files: { report: string; episodes: string | null };
}

/** `text` cut to `max` characters, with how much was left out. */
export function cutText(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters)`;
}

/** A JSON value with long strings, arrays and objects cut (depth-bounded), for display only. */
export function cutValue(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return cutText(value, VALUE_CHARS);
  if (value === null || typeof value !== 'object') return value;
  if (depth > 6) return '…';
  if (Array.isArray(value)) {
    const kept = value.slice(0, ITEMS).map((v) => cutValue(v, depth + 1));
    if (value.length > ITEMS) kept.push(`… (${value.length - ITEMS} more items)`);
    return kept;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries.slice(0, ITEMS)) out[cutText(k, 100)] = cutValue(v, depth + 1);
  if (entries.length > ITEMS) out['…'] = `${entries.length - ITEMS} more keys`;
  return out;
}

function ended(e: GradedEpisode): string {
  const a = e.record.agent;
  if (a.timedOut) return `timed out after ${a.durationMs} ms`;
  if (a.signal) return `killed by ${a.signal}`;
  return a.exitCode === null ? 'did not run' : `exit ${a.exitCode}`;
}

/** Optional arrays other parts of the record may carry (conversation turns, model calls). */
function optionalList(record: object, ...names: string[]): unknown[] | undefined {
  for (const name of names) {
    const v = (record as Record<string, unknown>)[name];
    if (Array.isArray(v)) return cutValue(v) as unknown[];
  }
  return undefined;
}

/** One graded episode projected for the page. */
export function episodeView(e: GradedEpisode): EpisodeView {
  const r = e.record;
  const result = r.agent.result;
  const applied = new Map<string, number>();
  const calls: CallView[] = r.calls.slice(0, ITEMS).map((c, i) => ({
    seq: c.seq,
    tool: c.tool,
    args: cutValue(c.args),
    status: c.status,
    ...(c.error?.code ? { code: c.error.code } : {}),
    ...(c.fault ? { fault: c.fault } : {}),
    effect: c.replay ? 'replayed' : c.mutated ? 'applied' : 'none',
    ...(c.result !== undefined
      ? { result: cutValue(c.result) }
      : c.error
        ? { result: cutValue(c.error) }
        : {}),
    ...(c.harnessError ? { note: cutText(`harness error: ${c.harnessError}`, VALUE_CHARS) } : {}),
    ...(c.cutOff ? { note: 'cut off: the episode ended before the reply' } : {}),
    ...sameEffect(c, i),
  }));
  function sameEffect(c: CallRecord, i: number): { same_effect_as?: number } {
    if (!c.mutated || c.replay) return {};
    const earlier = applied.get(effectOf(c));
    if (earlier === undefined) applied.set(effectOf(c), i + 1);
    return earlier === undefined ? {} : { same_effect_as: earlier };
  }
  const allChanges = Object.values(r.diff.tables).flatMap((t) => [...t.inserted, ...t.updated, ...t.deleted]);
  const changes = allChanges.slice(0, ITEMS).map((c) => cutValue(c) as RowChange);
  const cut = {
    ...(r.calls.length > ITEMS ? { calls: r.calls.length - ITEMS } : {}),
    ...(allChanges.length > ITEMS ? { changes: allChanges.length - ITEMS } : {}),
  };
  const turns = optionalList(r, 'turns', 'transcript');
  const modelCalls = optionalList(r, 'model_calls', 'modelCalls');
  const stderr = r.agent.stderr.trim();
  return {
    episode: r.episode,
    repeat: r.repeat,
    grade: r.infraError ? 'error' : e.passed ? 'pass' : 'fail',
    ...(result?.outcome ? { outcome: result.outcome } : {}),
    ...(result ? { reply: cutText(result.reply, REPLY_CHARS) } : {}),
    ended: ended(e),
    ...(r.agent.resultError ? { resultError: cutText(r.agent.resultError, VALUE_CHARS) } : {}),
    // The tail: the last lines are where a crash says why.
    ...(stderr ? { stderr: stderr.length > STDERR_CHARS ? `…${stderr.slice(-STDERR_CHARS)}` : stderr } : {}),
    ...(r.infraError
      ? { infraError: cutText(`${r.infraError.stage}: ${r.infraError.message}`, VALUE_CHARS) }
      : {}),
    results: e.results.map((x) => ({
      id: x.id,
      grade: x.verdict,
      critical: x.critical,
      ...(x.label ? { label: x.label } : {}),
      message: cutText(x.message, VALUE_CHARS),
    })),
    calls,
    changes,
    ...(Object.keys(cut).length > 0 ? { cut } : {}),
    ...(turns ? { turns } : {}),
    ...(modelCalls ? { model_calls: modelCalls } : {}),
  };
}

/** The page's data: the report and, when given, the episodes grouped by case and side. */
export function viewerData(
  report: Report,
  episodes: Iterable<GradedEpisode> | null,
  files: ViewerData['files'] = { report: 'report.json', episodes: report.episodes_file ?? null },
): ViewerData {
  if (!episodes) return { report, episodes: null, files: { ...files, episodes: null } };
  const known = new Set(report.cases.map((c) => c.id));
  const byCase: NonNullable<ViewerData['episodes']> = {};
  for (const e of episodes) {
    const id = e.record.scenario;
    if (!known.has(id)) continue; // another shard's case, or a file from an older run
    byCase[id] ??= {};
    const sides = byCase[id];
    sides[e.record.side] ??= [];
    sides[e.record.side]?.push(episodeView(e));
  }
  for (const sides of Object.values(byCase))
    for (const list of Object.values(sides)) list?.sort((a, b) => a.repeat - b.repeat);
  return { report, episodes: byCase, files };
}
