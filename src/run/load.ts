// Loading what a run needs: the pinned suite from one side, the base's own suite for the policy,
// the agent configuration from each. Each stategate.yml is loaded once per run (SuiteFiles).
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadSuite } from '../config/load.js';
import type { AgentConfig } from '../config/schema.js';
import { ConfigError, type LoadResult, type Suite } from '../config/suite.js';
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

/**
 * The run's stategate.yml files, each loaded once: the pinned suite, the base's own suite (for its
 * policy and suite changes) and each side's agent section, which a side's own suite already holds.
 */
export class SuiteFiles {
  private readonly loaded = new Map<string, Promise<LoadResult>>();

  /** A suite from its own checkout, loaded on first use. */
  load(configPath: string): Promise<LoadResult> {
    const path = resolve(configPath);
    let result = this.loaded.get(path);
    if (!result) {
      result = loadSuite(path);
      this.loaded.set(path, result);
    }
    return result;
  }

  /** The pinned suite; throws ConfigError with every problem. */
  async pinned(configPath: string): Promise<Suite> {
    if (!existsSync(configPath)) return loadPinnedSuite(configPath);
    const result = await this.load(configPath);
    if (!result.ok) throw new ConfigError(result.problems);
    return result.suite;
  }

  /**
   * A side's agent section: from its own suite when that loaded (the agent section does not depend on
   * where the scenarios are read from), else checked against the pinned suite's files as before.
   */
  async agentOf(configPath: string, pinned: Suite, side: Side): Promise<AgentConfig> {
    if (configPath === pinned.configFile || !existsSync(configPath)) return pinned.config.agent;
    const own = this.loaded.get(resolve(configPath));
    if (own) {
      const result = await own;
      if (result.ok) return result.suite.config.agent;
    }
    return loadSideConfig(configPath, pinned, side);
  }
}
