// The evidence a reviewer asks for next, kept in report.json beside a case: the calls of one
// representative episode per side (for the step-by-step table), and, when an agent crashed or
// printed no result, how it ended and the last lines of its stderr. Both bounded: report.json
// carries a tail, episodes.jsonl the whole record.
import type { AgentRun, GradedEpisode } from '../model/episode.js';
import type { AgentStderr, EpisodeSteps } from '../model/report.js';
import { episodePassed, inRepeatOrder, isGradable } from './episodes.js';
import { toTrajectory } from './trajectory.js';

/** At most this many calls per side in the step-by-step table. */
export const STEPS_CAP = 50;

/** At most this many lines and bytes of an agent's stderr in report.json. */
export const STDERR_TAIL = { lines: 20, bytes: 2048 } as const;

/** Characters of a string inside a step's arguments: the table shows far fewer. */
const ARG_STRING = 200;

/** Arguments with every string cut to ARG_STRING characters (episodes.jsonl keeps them whole). */
function shortArgs(value: unknown, depth = 0): unknown {
  if (typeof value === 'string')
    return value.length > ARG_STRING ? `${value.slice(0, ARG_STRING - 1)}…` : value;
  if (value === null || typeof value !== 'object') return value;
  if (depth >= 8) return '…';
  if (Array.isArray(value)) return value.slice(0, 20).map((v) => shortArgs(v, depth + 1));
  return Object.fromEntries(
    Object.entries(value)
      .slice(0, 50)
      .map(([k, v]) => [k, shortArgs(v, depth + 1)]),
  );
}

/** Characters of the representative episode's reply kept in report.json. */
export const REPLY_CHARS = 500;

/** One episode's calls as the table's steps (at most `cap`), with its reply and claimed outcome. */
export function episodeSteps(e: GradedEpisode, cap = STEPS_CAP): EpisodeSteps {
  const steps = toTrajectory(e.record.calls);
  // toTrajectory orders by seq; the codes come from the calls in the same order.
  const codes = [...e.record.calls].sort((a, b) => a.seq - b.seq).map((c) => c.error?.code);
  const out: EpisodeSteps = {
    episode: e.record.episode,
    repeat: e.record.repeat,
    outcome: !isGradable(e) ? 'not graded' : episodePassed(e) ? 'passed' : 'failed',
    steps: steps.slice(0, cap).map((s, i) => {
      const code = s.status >= 300 && codes[i] ? { code: codes[i].slice(0, 100) } : {};
      return { ...s, args: shortArgs(s.args), ...code };
    }),
  };
  if (steps.length > cap) out.steps_cut = steps.length - cap;
  // In a conversation the steps carry their turn and the turns come beside them, so a table can interleave them.
  const conversation = e.record.conversation;
  if (conversation) {
    const turnOf = new Map(e.record.calls.map((c) => [c.seq, c.turn]));
    const bySeq = [...e.record.calls].sort((a, b) => a.seq - b.seq);
    out.steps = out.steps.map((s, i) => {
      const turn = turnOf.get(bySeq[i]?.seq);
      return turn === undefined ? s : { ...s, turn };
    });
    out.turns = conversation.turns.slice(0, cap * 2).map((t) => ({
      role: t.role,
      turn: t.turn,
      text: t.text.length > TURN_TEXT_CAP ? `${t.text.slice(0, TURN_TEXT_CAP - 1)}…` : t.text,
      ...(t.facts && t.facts.length > 0 ? { facts: t.facts } : {}),
    }));
    out.conversation_end = conversation.end;
  }
  const result = e.record.agent.result;
  if (result && typeof result.reply === 'string') {
    const chars = Array.from(result.reply);
    out.reply = chars.length > REPLY_CHARS ? `${chars.slice(0, REPLY_CHARS - 1).join('')}…` : result.reply;
  }
  if (result?.outcome) out.claimed = result.outcome;
  return out;
}

/** Characters of one conversation turn kept in a step table. */
export const TURN_TEXT_CAP = 500;

/** How the agent ended when it did not end well, in a few words; null when it exited 0 with a result. */
export function badEnding(agent: AgentRun): string | null {
  if (agent.timedOut) return `timed out after ${Math.round(agent.durationMs)} ms`;
  const why = agent.resultError ? `: ${agent.resultError}` : '';
  if (agent.signal) return `was killed by ${agent.signal}${why}`;
  if (agent.exitCode === null) return `did not run to an exit${why}`;
  if (agent.exitCode !== 0) return `exited with code ${agent.exitCode}${why}`;
  if (!agent.result || agent.resultError !== undefined) return `exited 0 and printed no valid result${why}`;
  return null;
}

/**
 * The last lines of a text, at most `lines` lines and `bytes` UTF-8 bytes (never half a character),
 * trailing blank lines dropped; `cut` says whether anything before them was left out.
 */
export function lastLines(
  text: string,
  lines: number = STDERR_TAIL.lines,
  bytes: number = STDERR_TAIL.bytes,
): { tail: string; cut: boolean } {
  const all = text.replace(/\r\n/g, '\n').replace(/\s+$/, '').split('\n');
  if (all.length === 1 && all[0] === '') return { tail: '', cut: false };
  const kept: string[] = [];
  let used = 0;
  for (let i = all.length - 1; i >= 0 && kept.length < lines; i--) {
    const line = all[i];
    const size = Buffer.byteLength(line, 'utf8') + (kept.length > 0 ? 1 : 0);
    if (used + size > bytes) {
      // A single line longer than the budget keeps its end, cut at a character.
      if (kept.length === 0) {
        const chars = Array.from(line);
        let end = '';
        for (let j = chars.length - 1; j >= 0; j--) {
          if (Buffer.byteLength(`…${chars[j]}${end}`, 'utf8') > bytes) break;
          end = chars[j] + end;
        }
        kept.unshift(`…${end}`);
      }
      break;
    }
    kept.unshift(line);
    used += size;
  }
  return { tail: kept.join('\n'), cut: kept.length < all.length || kept[0]?.startsWith('…') === true };
}

/**
 * The first repeat (in repeat order) whose agent crashed, timed out or printed no valid result, with
 * the tail of its stderr; undefined when every agent ended well. Repeats the harness stopped are
 * left out: their ending says nothing about the agent.
 */
export function agentStderr(episodes: readonly GradedEpisode[]): AgentStderr | undefined {
  for (const e of inRepeatOrder(episodes)) {
    if (e.record.infraError) continue;
    const ended = badEnding(e.record.agent);
    if (ended === null) continue;
    const { tail, cut } = lastLines(e.record.agent.stderr ?? '');
    const out: AgentStderr = { episode: e.record.episode, repeat: e.record.repeat, ended, tail };
    if (cut) out.cut = true;
    return out;
  }
  return undefined;
}
