// One episode's model state inside the gateway: its key (valid for this episode only), its model
// call record, its spend against budget.episode_usd, and which model fault a call meets.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ModelFaultRule } from '../config/schema.js';
import type { ModelCallRecord } from '../model/episode.js';
import { includesArgs } from './canonical.js';
import { faultDraw } from './faults.js';
import type { ModelSpec } from './types.js';

/** Refused-key calls kept in one episode's record; later ones are answered the same and not kept. */
export const WRONG_KEYS_KEPT = 100;

/** The agent's variables per API, as the providers' official SDKs read them. */
const DEFAULT_VARS = {
  openai: { url: 'OPENAI_BASE_URL', key: 'OPENAI_API_KEY' },
  anthropic: { url: 'ANTHROPIC_BASE_URL', key: 'ANTHROPIC_API_KEY' },
} as const;

/** A model fault rule that fired, with its index among the scenario's model faults. */
export interface FiredModelFault {
  rule: ModelFaultRule;
  index: number;
}

export class ModelSession {
  /** The key the agent gets: it opens this episode's model routes and nothing else. */
  readonly key: string;
  private readonly keyDigest: Buffer;
  private readonly records: ModelCallRecord[] = [];
  private readonly callNumbers = new Map<string, number>();
  private lastSeq = 0;
  private spent = 0;

  constructor(
    readonly spec: ModelSpec,
    readonly seed: number,
  ) {
    // The prefix says what it is to anyone who finds one in a log: no provider issues `sg-episode-`.
    this.key = `sg-episode-${randomBytes(24).toString('hex')}`;
    this.keyDigest = digest(this.key);
  }

  /** Whether `presented` is this episode's key (compared in constant time). */
  keyMatches(presented: string | undefined): boolean {
    return presented !== undefined && timingSafeEqual(digest(presented), this.keyDigest);
  }

  /** The next sequence number, in arrival order (1-based). */
  nextSeq(): number {
    return ++this.lastSeq;
  }

  private wrongKeys = 0;

  /** Counts a call to `provider` that reached the fault check and returns its number (1-based). */
  nextCallNumber(provider: string): number {
    const n = (this.callNumbers.get(provider) ?? 0) + 1;
    this.callNumbers.set(provider, n);
    return n;
  }

  /** What the recorded calls cost so far (calls without a price count nothing). */
  get spentUsd(): number {
    return this.spent;
  }

  /** Whether the episode's budget is spent: its next call is refused. */
  overBudget(): boolean {
    return this.spec.episodeUsd !== undefined && this.spent >= this.spec.episodeUsd;
  }

  record(call: ModelCallRecord): void {
    // A refused key costs nothing and says only that the agent guessed: an agent that keeps guessing
    // must not grow its record without end (as the gateway keeps only so many refused tool calls).
    if (call.fault === 'wrong_key' && this.wrongKeys++ >= WRONG_KEYS_KEPT) return;
    this.records.push(call);
    if (call.costUsd !== null && call.costUsd > 0) {
      this.spent += call.costUsd;
      this.spec.onSpend?.(call.costUsd);
    }
  }

  /** The finished calls, in sequence order. */
  calls(): ModelCallRecord[] {
    return [...this.records].sort((a, b) => a.seq - b.seq);
  }

  /** The first model fault rule for `provider` whose `when` holds for its n-th call with this body. */
  pickFault(provider: string, callNumber: number, body: unknown): FiredModelFault | undefined {
    const rules = this.spec.faults ?? [];
    for (let index = 0; index < rules.length; index++) {
      const rule = rules[index];
      if (rule.model !== provider) continue;
      const w = rule.when;
      if (w.call !== undefined && callNumber !== w.call) continue;
      if (w.calls !== undefined && !w.calls.includes(callNumber)) continue;
      if (w.first !== undefined && callNumber > w.first) continue;
      if (w.args !== undefined && !includesArgs(body, w.args)) continue;
      // `model:` keeps the draws apart from a tool of the same name.
      if (
        w.probability !== undefined &&
        faultDraw(this.seed, index, `model:${provider}`, callNumber) >= w.probability
      )
        continue;
      return { rule, index };
    }
    return undefined;
  }
}

// Fixed-length digests, so timingSafeEqual never throws on a key of another length.
function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/**
 * The agent's model variables: for each provider the base URL under `base` (`.../m/TOKEN`) and the
 * episode's key. OpenAI SDKs take a base URL ending in `/v1`; Anthropic SDKs add `/v1` themselves.
 * Throws when two providers would set the same variable (give one `env:` names of its own).
 */
export function modelEnv(base: string, spec: ModelSpec, key: string): Record<string, string> {
  const out: Record<string, string> = {};
  const setBy: Record<string, string> = {};
  for (const [name, route] of Object.entries(spec.providers)) {
    const vars = { ...DEFAULT_VARS[route.api], ...route.env };
    const url = route.api === 'openai' ? `${base}/${name}/v1` : `${base}/${name}`;
    for (const [variable, value] of [
      [vars.url, url],
      [vars.key, key],
    ] as const) {
      if (setBy[variable] !== undefined && out[variable] !== value)
        throw new Error(
          `models.${setBy[variable]} and models.${name} both set ${variable}: give one of them env: {url: ..., key: ...} names of its own`,
        );
      out[variable] = value;
      setBy[variable] = name;
    }
  }
  return out;
}
