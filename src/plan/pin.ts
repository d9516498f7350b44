// The pinned suite: content hashes of everything both sides run, and the seeds derived from them.
// Both sides of a pair run exactly this; the report stores it so a pair can be proven pinned.
import { createHash } from 'node:crypto';
import type { Suite } from '../config/suite.js';
import { contentHash } from '../model/content-hash.js';

export interface PinnedSuite {
  suiteHash: string;
  templateHash: string;
  twinsHash: string;
  /** Scenario id -> content hash. */
  scenarios: Record<string, string>;
}

/** Hashes the suite's parsed content (not its formatting): template, twins, each scenario. */
export function pinSuite(suite: Suite): PinnedSuite {
  const templateHash = contentHash(suite.template);
  const tools = [...suite.tools.values()].map(({ file: _file, ...tool }) => tool);
  tools.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const twinsHash = contentHash(tools);
  const scenarios: Record<string, string> = {};
  for (const s of [...suite.scenarios].sort((a, b) => (a.id < b.id ? -1 : 1))) {
    const { file: _file, lines: _lines, ...content } = s;
    scenarios[s.id] = contentHash(content);
  }
  const suiteHash = contentHash({ templateHash, twinsHash, scenarios });
  return { suiteHash, templateHash, twinsHash, scenarios };
}

/** The seed of one repeat of one scenario: the same for both sides of a pair, stable across runs. */
export function seedFor(suiteHash: string, scenarioId: string, repeat: number): number {
  const h = createHash('sha256').update(`${suiteHash}\0${scenarioId}\0${repeat}`).digest();
  return h.readUInt32BE(0);
}
