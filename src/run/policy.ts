// Which stategate.yml the gate policy comes from. The head's suite runs, but the head is the code under
// review: by default its gate lists, its repeats floor, its judge (endpoint, model, key and
// calibration), its models, budget and user simulator, and its database server are the base's, and the base's suite is what `suite_changes`
// is measured against.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { diffSuites, repeatsWithFloor } from '../compare/suite-changes.js';
import { StategateConfig } from '../config/schema.js';
import { formatProblem, type Suite } from '../config/suite.js';
import type { Side } from '../model/episode.js';
import type { PolicySource, SuiteChange } from '../model/report.js';
import type { Checkout } from './checkout.js';
import { SuiteFiles } from './load.js';

export type PolicyFrom = 'base' | 'head';

export interface RunPolicy {
  /** The suite that runs, with the gate, repeats and judge calibration of the policy put in. */
  suite: Suite;
  source: PolicySource;
  /** Differences from the base's suite; undefined when there is no base suite to compare with. */
  changes: SuiteChange[] | undefined;
  /** Said as a warning: the base's stategate.yml exists but did not load. */
  warning?: string;
}

export interface PolicyInput {
  policyFrom: PolicyFrom;
  /** The pinned suite, and which side it was loaded from. */
  pinned: Suite;
  pinnedSide: Side;
  /** The base's checkout; undefined for a head-only run. */
  base: Checkout | undefined;
  /** stategate.yml, relative to the checkout. */
  configName: string;
  /** The run's stategate.yml files, each loaded once (default: a set of its own). */
  files?: SuiteFiles;
}

type BaseSuite = { suite: Suite } | { missing: string } | { problem: string };

/** Loads the base's own suite (from its own checkout) and decides the policy of the run. */
export async function resolvePolicy(input: PolicyInput): Promise<RunPolicy> {
  const { pinned } = input;
  const base = await baseSuite(input);
  const changes = 'suite' in base ? diffSuites(base.suite, pinned) : undefined;
  if (input.policyFrom === 'head') {
    return { suite: pinned, source: { side: 'head', reason: 'policy-from head was asked for' }, changes };
  }
  if ('missing' in base) return { suite: pinned, source: { side: 'head', reason: base.missing }, changes };
  if ('problem' in base) {
    const reason = `the base's ${input.configName} could not be loaded (${base.problem}); suite changes are unknown`;
    const suite = withPolicy(pinned, {
      // The gate a stategate.yml without `gate:` has.
      gate: StategateConfig.shape.gate.parse(undefined),
      repeats: pinned.config.repeats,
      // No calibration is believed: every judge criterion warns instead of blocking.
      judgeCalibration: null,
    });
    // Nor is the head's judge, nor its models: they would choose where replies and keys go.
    suite.config = {
      ...suite.config,
      judge: undefined,
      models: {},
      budget: undefined,
      user_simulator: undefined,
      // Ignoring a column hides its differences: only a trusted stategate.yml may.
      ignore_columns: undefined,
    };
    return { suite, source: { side: 'default', reason }, changes, warning: reason };
  }
  const policy = base.suite;
  const suite = withPolicy(pinned, {
    gate: policy.config.gate,
    repeats: repeatsWithFloor(pinned.config.repeats, policy.config.repeats),
    judgeCalibration: policy.judgeCalibration ?? null,
  });
  // The harness sends every reply and judge.api_key_env's value to judge.url, and connects to
  // database.url as an admin: the head's file must not choose where those go.
  const { engine, url, image } = policy.config.database;
  const trusted: Suite = {
    ...suite,
    config: {
      ...suite.config,
      judge: policy.config.judge,
      // The model gateway sends api_key_env's value to models.*.url: the head must not choose where
      // a key goes, raise what may be spent or change who plays the user.
      models: policy.config.models,
      budget: policy.config.budget,
      user_simulator: policy.config.user_simulator,
      // The head's ignore list could hide the very difference its change makes.
      ignore_columns: policy.config.ignore_columns,
      database: { ...suite.config.database, engine, url, image },
    },
  };
  const warning =
    pinned.config.judge && !policy.config.judge
      ? `the base's ${input.configName} has no judge: section, so the head's is not used: judge expectations are incomplete until it is merged`
      : undefined;
  return {
    suite: trusted,
    source: { side: 'base', reason: `the base's ${input.configName}` },
    changes,
    ...(warning ? { warning } : {}),
  };
}

async function baseSuite(input: PolicyInput): Promise<BaseSuite> {
  if (!input.base) return { missing: 'no base: the head runs alone' };
  if (input.pinnedSide === 'base') return { suite: input.pinned };
  const path = resolve(input.base.dir, input.configName);
  // Base and head are the same directory: its suite is already loaded.
  if (path === input.pinned.configFile) return { suite: input.pinned };
  if (!existsSync(path))
    return { missing: `the base has no ${input.configName} (the pull request adopts Stategate)` };
  const loaded = await (input.files ?? new SuiteFiles()).load(path);
  if (loaded.ok) return { suite: loaded.suite };
  const more = loaded.problems.length > 1 ? ` and ${loaded.problems.length - 1} more problems` : '';
  return { problem: `${formatProblem(loaded.problems[0])}${more}` };
}

function withPolicy(
  suite: Suite,
  policy: Pick<Suite['config'], 'gate' | 'repeats'> & { judgeCalibration: Suite['judgeCalibration'] },
): Suite {
  return {
    ...suite,
    config: { ...suite.config, gate: policy.gate, repeats: policy.repeats },
    judgeCalibration: policy.judgeCalibration,
  };
}

/** The policy's source in words, for logs: `the base's stategate.yml`. */
export function policyWords(source: PolicySource): string {
  return source.side === 'default' ? 'the built-in default' : `from ${source.side}: ${source.reason}`;
}
