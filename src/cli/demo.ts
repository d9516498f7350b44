// `stategate demo` (npm run demo): the example refund agent's three versions as pinned pairs,
// v1.2.4 -> v1.3.0 (the "faster refunds" rewrite), v1.3.0 -> v1.3.1 (the fix), v1.2.4 -> v1.3.1.
// `stategate demo --flaky`: the seeded-random flaky agent of examples/flaky-agent, graded alone, so
// the report explains where its passing and failing repeats fork.
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EpisodeRecord } from '../model/episode.js';
import { renderTerminal } from '../report/terminal.js';
import type { CompareOptions, CompareResult } from '../run/api.js';
import { runCompare } from '../run/pipeline.js';
import { createProgress } from './progress.js';

export const DEMO_PAIRS: [string, string][] = [
  ['v1.2.4', 'v1.3.0'],
  ['v1.3.0', 'v1.3.1'],
  ['v1.2.4', 'v1.3.1'],
];

/** The project root, where stategate.yml, examples/ and scenarios/ of the demo live. */
export function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'examples', 'refund-agent')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

/** Writes a checkout of the demo at one version of the agent into `dir`. */
export function writeDemoVersion(root: string, version: string, dir: string): void {
  cpSync(join(root, 'stategate.yml'), join(dir, 'stategate.yml'));
  cpSync(join(root, 'scenarios'), join(dir, 'scenarios'), { recursive: true });
  cpSync(join(root, 'examples', 'refund-agent'), join(dir, 'examples', 'refund-agent'), { recursive: true });
  cpSync(
    join(root, 'examples', 'refund-agent', 'versions', `${version}.json`),
    join(dir, 'examples', 'refund-agent', 'manifest.json'),
  );
}

export interface DemoOptions {
  engine?: CompareOptions['engine'];
  /** For the postgres engine: the server's admin URL. */
  databaseUrl?: string;
  out?: string;
  color: boolean;
}

export const FLAKY_CONFIG = 'examples/flaky-agent/stategate.yml';

/** Runs the flaky agent's suite alone (8 repeats) and prints its report; resolves to its report. */
export async function runFlakyDemo(opts: DemoOptions): Promise<CompareResult> {
  const root = projectRoot();
  const work = mkdtempSync(join(tmpdir(), 'stategate-demo-flaky-'));
  try {
    // The agent's command runs from the checkout root, so the copy keeps the example's path; the
    // agent borrows the refund agent's tool client and protocol.
    for (const example of ['flaky-agent', 'refund-agent']) {
      cpSync(join(root, 'examples', example), join(work, 'examples', example), { recursive: true });
    }
    const result = await runCompare({
      base: null,
      head: work,
      repo: work,
      config: FLAKY_CONFIG,
      out: resolve(opts.out ?? join('.stategate', 'demo-flaky')),
      engine: opts.engine,
      databaseUrl: opts.databaseUrl,
      onProgress: createProgress(),
    });
    process.stdout.write(renderTerminal(result.report, { color: opts.color }));
    process.stdout.write(`Report: ${result.markdownPath} (and ${result.htmlPath}: stategate view)\n`);
    return result;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export async function runDemo(opts: DemoOptions): Promise<number> {
  const root = projectRoot();
  const work = mkdtempSync(join(tmpdir(), 'stategate-demo-'));
  const out = resolve(opts.out ?? join('.stategate', 'demo'));
  const verdicts: string[] = [];
  // Each version's episodes run once and serve both comparisons it is part of.
  const episodeCache = new Map<string, EpisodeRecord>();
  try {
    const versions = [...new Set(DEMO_PAIRS.flat())];
    for (const v of versions) writeDemoVersion(root, v, join(work, v));
    for (const [base, head] of DEMO_PAIRS) {
      process.stdout.write(`\n=== ${base} -> ${head} ===\n`);
      const result = await runCompare({
        // Relative to `repo`, so the report names the versions rather than temporary paths.
        base,
        head,
        repo: work,
        out: join(out, `${base}-to-${head}`),
        engine: opts.engine,
        databaseUrl: opts.databaseUrl,
        episodeCache,
        onProgress: createProgress(),
      });
      process.stdout.write(renderTerminal(result.report, { color: opts.color }));
      process.stdout.write(`Report: ${result.markdownPath} (and ${result.htmlPath}: stategate view)\n`);
      verdicts.push(`${base} -> ${head}: ${result.report.verdict}`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  process.stdout.write(`\nDemo verdicts:\n${verdicts.map((v) => `  ${v}`).join('\n')}\n`);
  return 0;
}
