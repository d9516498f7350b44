// The entry points the CLI and the action share, implemented by the pipeline in run/pipeline.ts.

import type { EpisodeRecord } from '../model/episode.js';
import type { Report } from '../model/report.js';
import type { ScenarioFilter } from '../plan/scenario-filter.js';
import type { EngineName } from '../sandbox/types.js';

/** A progress event, for a live terminal line or plain CI log lines. */
export type ProgressEvent =
  | { type: 'phase'; phase: string; message: string }
  | { type: 'episode'; done: number; total: number; scenario: string; side: string; passed: boolean | null }
  | { type: 'log'; level: 'info' | 'warn'; message: string };

export interface CompareOptions {
  /** A directory or a git ref; null: run head alone (first run on a new repository). */
  base: string | null;
  /** A directory or a git ref. */
  head: string;
  /** The repository the refs belong to (default: cwd). */
  repo?: string;
  /** stategate.yml, relative to each side's checkout (default stategate.yml). */
  config?: string;
  repeats?: number;
  concurrency?: number;
  shard?: { index: number; total: number } | null;
  /** `--scenario` / `--tag` (the CLI only): grade these scenarios; the report says the run is filtered. */
  filter?: ScenarioFilter | null;
  /** Output directory (default .stategate). */
  out?: string;
  engine?: 'auto' | EngineName;
  /** How `engine` was written, for the report's engine reason: `--engine` (default) or the action's input. */
  engineOption?: string;
  /** A postgres admin URL, overriding database.url (with --engine postgres, $STATEGATE_DATABASE_URL is the fallback). */
  databaseUrl?: string;
  /**
   * What happens to the run's databases on a server it does not own (the postgres engine) once the
   * last episode has ended: 'wait' (the default) drops them before runCompare resolves; 'detach'
   * hands the drops to a child process that outlives this one (the CLI: its user need not wait for
   * them). A run that fails or is interrupted always drops them itself.
   */
  teardown?: 'wait' | 'detach';
  suiteFrom?: 'head' | 'base';
  /** Whose stategate.yml gives the gate, the repeats floor and the judge calibration (default base). */
  policyFrom?: 'base' | 'head';
  /** Overrides agent.isolation of both sides (a workflow can require containers whatever a head says). */
  isolation?: 'process' | 'container' | 'none';
  /** never: the agent's sandbox does not run through passwordless sudo (default auto; STATEGATE_SUDO). */
  sudo?: 'auto' | 'never';
  /** The bwrap binary the sandbox runs (default `bwrap` on PATH): the action's, when it installed one. */
  bwrap?: string;
  onProgress?: (event: ProgressEvent) => void;
  signal?: AbortSignal;
  /**
   * Episode records of earlier runs in this process, by checkout, pinned suite, scenario and seed:
   * a side already run on exactly this suite is not run again (the demo's pairwise comparisons).
   */
  episodeCache?: Map<string, EpisodeRecord>;
  /**
   * A baseline cache directory: the base's graded episodes are reused from it when their key matches
   * (base tree, pinned suite, seeds, repeats, engine, stategate version) and stored in it after a
   * complete run. A clean git base only; an entry that cannot be read is a miss.
   */
  cache?: string;
}

/** The baseline cache entry a run wrote: its file and the sha256 of the bytes written. */
export interface BaselineStored {
  file: string;
  sha256: string;
}

export interface CompareResult {
  report: Report;
  /** The baseline cache entry this run wrote, when it wrote one (`cache`). */
  baselineStored?: BaselineStored;
  reportPath: string;
  markdownPath: string;
  markdown: string;
  /** report.html beside report.md. */
  htmlPath: string;
}
