// Loading what a run needs: the pinned suite from one side, the agent configuration from each.
import { existsSync } from 'node:fs';
import { loadSuite } from '../config/load.js';
import type { AgentConfig } from '../config/schema.js';
import { ConfigError, type Suite } from '../config/suite.js';
import type { Side } from '../model/episode.js';

/** Loads and validates the suite; throws ConfigError with every problem. */
export async function loadPinnedSuite(configPath: string): Promise<Suite> {
  if (!existsSync(configPath)) {
    throw new ConfigError([
      {
        file: configPath,
        line: 1,
        col: 1,
        message: 'no stategate.yml here (pass --config FILE, or create one: see docs/formats/stategate.md)',
      },
    ]);
  }
  const result = await loadSuite(configPath);
  if (!result.ok) throw new ConfigError(result.problems);
  return result.suite;
}

/**
 * The agent section of a side's own stategate.yml (the base may start its agent differently from
 * the head); the suite itself always comes from the pinned side. A side without the file (the PR
 * that adopts stategate) runs with the pinned side's agent section.
 */
export async function loadSideConfig(configPath: string, pinned: Suite, side: Side): Promise<AgentConfig> {
  if (configPath === pinned.configFile || !existsSync(configPath)) return pinned.config.agent;
  const result = await loadSuite(configPath, { suiteRoot: pinned.root });
  if (!result.ok) {
    throw new ConfigError(result.problems.map((p) => ({ ...p, message: `(${side}) ${p.message}` })));
  }
  return result.suite.config.agent;
}
