// Regenerates the golden outputs: npm run goldens [-- --refresh]
//
// Without arguments: renders every output of each fixture report.json under test/report/golden/
// (see golden-outputs.ts) into that fixture's directory, and docs/example-report.md from the demo's
// report.md. The golden test compares the same renderings byte for byte, so run this after any
// change to what a report says, and review the diff.
//
// The sample set is built by test/report/fixtures.ts (goldenSampleReport), not by a run.
//
// With --refresh: first runs the real demo pair v1.2.4 → v1.3.0 and `stategate run` on the demo at
// v1.3.0 (embedded engine, a few minutes), and writes their report.json, normalised, as the
// fixtures. Needed when report.json itself gains a field.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeDemoVersion } from '../src/cli/demo.js';
import type { Report } from '../src/model/report.js';
import { ReportSchema } from '../src/report/report-schema.js';
import { runCompare } from '../src/run/pipeline.js';
import { validateReport } from '../src/run/read-report.js';
import { goldenSampleEpisodes, goldenSampleReport } from '../test/report/fixtures.js';
import { GOLDEN_SETS, type GoldenSet, goldenOutputs, normaliseReport, RUN_SETS } from './golden-outputs.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const goldenDir = join(root, 'test', 'report', 'golden');

/** Runs the real demo for one fixture and returns its report.json. */
async function freshReport(set: GoldenSet): Promise<Report> {
  const work = mkdtempSync(join(tmpdir(), 'stategate-goldens-'));
  try {
    const versions = set === 'demo' ? ['v1.2.4', 'v1.3.0'] : ['v1.3.0'];
    for (const v of versions) writeDemoVersion(root, v, join(work, v));
    const result = await runCompare({
      // Relative to `repo`, so the report names the versions rather than temporary paths.
      base: set === 'demo' ? 'v1.2.4' : null,
      head: 'v1.3.0',
      repo: work,
      out: join(work, 'out'),
      engine: 'embedded',
    });
    return result.report;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

const EXAMPLE_HEADER = `# Example: the report of v1.2.4 → v1.3.0

What a reviewer reads in the pull request when the "faster refunds" rewrite (v1.3.0) of the demo refund
agent is compared with v1.2.4: the \`report.md\` that \`npm run demo\` writes to
\`.stategate/demo/v1.2.4-to-v1.3.0/report.md\`; it is also the sticky PR comment and the check run
summary. Times, durations and latencies are fixed values here; token counts and costs are those of one
run. \`npm run goldens\` regenerates this page (see [demo.md](demo.md) for the versions and scenarios).

---

`;

async function main(): Promise<void> {
  const refresh = process.argv.includes('--refresh');
  for (const set of Object.keys(GOLDEN_SETS) as GoldenSet[]) {
    const dir = join(goldenDir, set);
    mkdirSync(dir, { recursive: true });
    const fixture = join(dir, 'report.json');
    const fromRun = (RUN_SETS as readonly string[]).includes(set);
    // The sample is built by code; its report.json is written for reading, not read back.
    if (!fromRun) writeFileSync(fixture, `${JSON.stringify(goldenSampleReport(), null, 2)}\n`);
    if (refresh && fromRun) {
      process.stdout.write(`running ${GOLDEN_SETS[set]} ...\n`);
      const report = normaliseReport(await freshReport(set));
      writeFileSync(fixture, `${JSON.stringify(report, null, 2)}\n`);
    }
    if (!existsSync(fixture)) throw new Error(`${fixture} is missing: run npm run goldens -- --refresh`);
    const value = JSON.parse(readFileSync(fixture, 'utf8')) as Report;
    // A fixture the strict schema refuses (a field since renamed) is reported, not rendered.
    const parsed = ReportSchema.safeParse(value);
    if (!parsed.success)
      throw new Error(
        `${fixture} is not a valid report.json (${parsed.error.message}); run npm run goldens -- --refresh`,
      );
    // Rendered as any report.json read from a file is: its verdict and reasons recomputed from its cases.
    const report = validateReport(value, fixture);
    const episodes = fromRun ? null : goldenSampleEpisodes();
    for (const [file, text] of Object.entries(goldenOutputs(report, episodes))) {
      writeFileSync(join(dir, file), text);
      process.stdout.write(`wrote test/report/golden/${set}/${file}\n`);
    }
    if (set === 'demo') {
      writeFileSync(
        join(root, 'docs', 'example-report.md'),
        EXAMPLE_HEADER + goldenOutputs(report)['report.md'],
      );
      process.stdout.write('wrote docs/example-report.md\n');
    }
  }
}

await main();
