// The gate policy `merge` judges with: the `gate:` section of the stategate.yml in the checkout the
// merge runs in, never the one the reports carry (a report says what it likes about its own gate).
// With no stategate.yml there, the built-in default policy.
import { resolve } from 'node:path';
import { StategateConfig } from '../config/schema.js';
import { displayPath, readTextFile } from '../config/source-file.js';
import { ConfigError } from '../config/suite.js';
import { parseYaml, problemAt } from '../config/yaml-source.js';
import { validate } from '../config/zod-problems.js';
import { DEFAULT_GATE, type GatePolicy } from '../gate/verdict.js';

/** The policy and where it came from, in words for the log and the report. */
export interface MergePolicy {
  gate: GatePolicy;
  source: string;
}

/**
 * Reads the gate of `config` (relative to `cwd`; default stategate.yml). A config named explicitly
 * must exist; the default one may be absent (the built-in policy then). A config that exists but
 * whose gate is malformed is a ConfigError with file:line:col.
 */
export async function loadMergePolicy(config: string | undefined, cwd: string): Promise<MergePolicy> {
  const abs = resolve(cwd, config ?? 'stategate.yml');
  const file = displayPath(abs);
  const read = await readTextFile(abs, file);
  if (!read.ok) {
    if (read.missing && config === undefined) {
      return {
        gate: DEFAULT_GATE,
        source: `the built-in default policy (no stategate.yml in ${displayPath(cwd) || '.'})`,
      };
    }
    throw new ConfigError([read.problem]);
  }
  const parsed = parseYaml(file, read.text);
  if (parsed.value === undefined) throw new ConfigError(parsed.problems);
  const value = parsed.value;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ConfigError([problemAt(parsed.source, [], 'expected a mapping (version: 1, agent, ...)')]);
  }
  const raw = (value as Record<string, unknown>).gate;
  const result = validate(StategateConfig.shape.gate, raw, parsed.source, ['gate']);
  if (!result.ok) throw new ConfigError(result.problems);
  return {
    gate: { block: [...result.data.block], warn: [...result.data.warn] },
    source: raw === undefined ? `${file} (no gate: section, so the default gate)` : `the gate of ${file}`,
  };
}

/**
 * The merge's gate made stricter by the gates the shard reports carry, never looser. A same-repo
 * merge job checks out the pull request's merge commit, whose stategate.yml is the head's; the
 * shards decided with the base's policy, and what they carry can only add classes to block or warn.
 */
export function stricterGate(
  own: GatePolicy,
  carried: ({ block: string[]; warn: string[] } | undefined)[],
): GatePolicy {
  const block = new Set(own.block);
  const warn = new Set(own.warn);
  for (const gate of carried) {
    for (const c of gate?.block ?? []) block.add(c);
    for (const c of gate?.warn ?? []) warn.add(c);
  }
  for (const c of block) warn.delete(c);
  return { block: [...block], warn: [...warn] };
}
