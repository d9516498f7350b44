// The action's inputs (action.yml), parsed and checked together so one run reports every mistake.
import {
  type Choice,
  type ChoiceOption,
  type FailOn,
  OptionError,
  parseChoice,
  parseCount,
  parseShard,
  type Shard,
  type SudoMode,
} from '../config/options.js';
import type { EngineName } from '../sandbox/types.js';
import type { ReportsFrom } from './trust.js';

/** What the workflow asked for, validated. */
export interface ActionInputs {
  config: string;
  /** Overrides the config's repeats; null keeps the config's. */
  repeats: number | null;
  failOn: FailOn;
  /** Run one slice of the suite, write its report and post nothing. */
  shard: Shard | null;
  /** A glob of shard reports to join, gate and post. */
  merge: string | null;
  comment: boolean;
  /** Reuse the base's episodes of an earlier trusted run on the same base tree (the baseline cache). */
  cache: boolean;
  token: string;
  /** The base to compare against when the event has none (push, workflow_dispatch). */
  baseRef: string | null;
  engine: 'auto' | EngineName | null;
  /** Whose stategate.yml gives the gate policy: the base's (default) or the head's. */
  policyFrom: 'base' | 'head';
  /** Overrides agent.isolation of both sides; null keeps the config's. */
  isolation: 'process' | 'container' | 'none' | null;
  /** Whether the agent's sandbox may run through passwordless sudo (default auto). */
  sudo: SudoMode;
  /** Install bubblewrap (with sudo: auto) where it is missing, before the run (default true). */
  installBubblewrap: boolean;
  /** Where to write JUnit XML; null writes none. */
  junit: string | null;
  out: string;
  /** Where the head is checked out, relative to the workspace ('.' : the workspace itself). */
  headPath: string;
  /** Whether the results may be trusted: `auto` (from the event) or `untrusted`. */
  reportsFrom: ReportsFrom;
}

/** Thrown when inputs are missing, malformed or contradict each other; lists every problem. */
export class InputError extends Error {
  constructor(readonly problems: string[]) {
    super(
      problems.length === 1 ? problems[0] : `invalid inputs:\n${problems.map((p) => `- ${p}`).join('\n')}`,
    );
    this.name = 'InputError';
  }
}

// The YAML 1.2 core schema booleans, which is what core.getBooleanInput accepts.
const TRUE = ['true', 'True', 'TRUE'];
const FALSE = ['false', 'False', 'FALSE'];

/** Parses the inputs from a getter (core.getInput in the action), rejecting bad and contradictory ones. */
export function parseInputs(get: (name: string) => string): ActionInputs {
  const problems: string[] = [];
  const text = (name: string) => get(name).trim();

  const config = text('config') || 'stategate.yml';
  const out = text('out') || '.stategate';

  /** An input through the parser the command line shares; a bad value is one more problem. */
  const option = <T>(name: string, parse: () => T, fallback: T): T => {
    try {
      return parse();
    } catch (e) {
      if (!(e instanceof OptionError)) throw e;
      problems.push(`${name}: ${e.message}`);
      return fallback;
    }
  };
  const choice = <N extends ChoiceOption>(name: N, fallback: Choice<N>): Choice<N> => {
    const value = text(name);
    return value === '' ? fallback : option(name, () => parseChoice(name, value), fallback);
  };

  const repeatsText = text('repeats');
  const repeats =
    repeatsText === '' ? null : option('repeats', () => parseCount('repeats', repeatsText), null);

  const failOn = choice('fail-on', 'block');

  const shardText = text('shard');
  const shard = shardText === '' ? null : option('shard', () => parseShard(shardText), null);

  const merge = text('merge') || null;

  const commentText = text('comment') || 'true';
  let comment = true;
  if (TRUE.includes(commentText)) comment = true;
  else if (FALSE.includes(commentText)) comment = false;
  else problems.push(`comment: expected true or false, got "${commentText}"`);

  const cacheText = text('cache') || 'true';
  let cache = true;
  if (TRUE.includes(cacheText)) cache = true;
  else if (FALSE.includes(cacheText)) cache = false;
  else problems.push(`cache: expected true or false, got "${cacheText}"`);

  const engineText = text('engine');
  const engine = engineText === '' ? null : option('engine', () => parseChoice('engine', engineText), null);
  const policyFrom = choice('policy-from', 'base');
  const isolationText = text('isolation');
  const isolation =
    isolationText === '' ? null : option('isolation', () => parseChoice('isolation', isolationText), null);

  const sudo = choice('sudo', 'auto');
  const installText = text('install-bubblewrap') || 'true';
  let installBubblewrap = true;
  if (TRUE.includes(installText)) installBubblewrap = true;
  else if (FALSE.includes(installText)) installBubblewrap = false;
  else problems.push(`install-bubblewrap: expected true or false, got "${installText}"`);
  const baseRef = text('base-ref') || null;
  const junit = text('junit') || null;
  const token = text('github-token');

  const headPath = text('head-path') || '.';
  if (headPath.startsWith('/') || /^[A-Za-z]:/.test(headPath) || headPath.split(/[\\/]/).includes('..')) {
    problems.push(
      `head-path: expected a directory inside the workspace (relative, no '..'), got "${headPath}"`,
    );
  }

  const reportsFromText = text('reports-from') || 'auto';
  const reportsFrom: ReportsFrom = reportsFromText === 'untrusted' ? 'untrusted' : 'auto';
  if (reportsFromText !== 'auto' && reportsFromText !== 'untrusted') {
    problems.push(
      `reports-from: expected auto or untrusted, got "${reportsFromText}" (a run the base repository does not control cannot be declared trusted)`,
    );
  }

  // A merge job runs nothing: inputs that shape a run would be silently ignored, so refuse them.
  if (merge !== null) {
    if (shardText !== '')
      problems.push('shard and merge contradict each other: a job either runs a slice or joins them');
    if (repeatsText !== '') problems.push('repeats has no effect with merge: set it on the shard jobs');
    if (engineText !== '') problems.push('engine has no effect with merge: set it on the shard jobs');
    if (isolationText !== '') problems.push('isolation has no effect with merge: set it on the shard jobs');
    if (baseRef !== null) problems.push('base-ref has no effect with merge: set it on the shard jobs');
    if (policyFrom === 'head')
      problems.push('policy-from has no effect with merge: set it on the shard jobs');
    if (headPath !== '.') problems.push('head-path has no effect with merge: set it on the shard jobs');
  }

  if (problems.length > 0) throw new InputError(problems);
  return {
    config,
    repeats,
    failOn,
    shard,
    merge,
    comment,
    cache,
    token,
    baseRef,
    engine,
    policyFrom,
    isolation,
    sudo,
    installBubblewrap,
    junit,
    out,
    headPath,
    reportsFrom,
  };
}
