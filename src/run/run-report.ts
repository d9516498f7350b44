// From a finished run to report.json and report.md on disk: the cases read back from the spool one
// at a time into compareSuite, then the report cut to the limits a merge enforces.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CaseInput } from '../compare/case.js';
import { compareSuite } from '../compare/suite.js';
import type { Scenario } from '../config/schema.js';
import type { Suite } from '../config/suite.js';
import { judgeCalibrationFacts } from '../judge/calibration.js';
import type { Side } from '../model/episode.js';
import type { Report } from '../model/report.js';
import type { PinnedSuite } from '../plan/pin.js';
import { renderMarkdown } from '../report/markdown.js';
import { boundReport } from '../report/report-bounds.js';
import type { Engine } from '../sandbox/types.js';
import type { CaseDecision } from '../stats/case-decision.js';
import type { SequentialPolicy } from '../stats/sequential.js';
import type { CompareResult } from './api.js';
import { type Checkout, sameFiles } from './checkout.js';
import type { CaseSpool } from './episode-log.js';
import { writeHtmlReport } from './report-html.js';
import { verifyPinned } from './verify-pin.js';

/** What a run knows beside its episodes when it writes report.json. */
export interface RunReportFacts {
  scenarios: Scenario[];
  suite: Suite;
  pin: PinnedSuite;
  engine: Pick<Engine, 'name' | 'reason'>;
  checkouts: Partial<Record<Side, Checkout>>;
  repeats: number;
  sequential: SequentialPolicy | null;
  /** The run loop's last decision per case under `sequential`; absent when the run was cut short. */
  decisions?: ReadonlyMap<string, CaseDecision>;
  shard: { index: number; total: number } | null;
  interrupted: boolean;
  startedAt: Date;
  /** Head alone: no base side at all (the first run on a new repository). */
  headOnly: boolean;
  policyFrom: Report['policy_from'];
  suiteChanges?: Report['suite_changes'];
  agentIsolation: Report['agent_isolation'];
  baselineCache?: Report['baseline_cache'];
  filter?: Report['filter'] | null;
}

/**
 * Builds report.json (compareSuite) one case at a time, each case's episodes read back from the
 * spool and checked against the pinned suite, so nothing is kept per episode while the run goes. A
 * case whose episodes never ran (interrupted) has empty sides: incomplete.
 */
export function reportFromSpool(spool: CaseSpool, run: RunReportFacts): Report {
  const side = (s: Side) => {
    const c = run.checkouts[s];
    if (!c) return null;
    return c.dirty ? { ref: c.ref, sha: c.sha, dirty: true as const } : { ref: c.ref, sha: c.sha };
  };
  function* cases(): Generator<CaseInput> {
    for (const scenario of run.scenarios) {
      const sides = spool.read(scenario.id);
      verifyPinned(run.pin, new Map([[scenario.id, sides]]));
      const decision = run.decisions?.get(scenario.id);
      yield {
        scenario,
        base: run.headOnly ? null : sides.base,
        head: sides.head,
        ...(decision ? { decision } : {}),
      };
    }
  }
  return compareSuite({
    cases: cases(),
    pin: { suite_hash: run.pin.suiteHash, template_hash: run.pin.templateHash, scenarios: run.pin.scenarios },
    sides: { base: side('base'), head: side('head') },
    engine: run.engine.name,
    engineReason: run.engine.reason,
    gate: run.suite.config.gate,
    repeats: run.repeats,
    sequential: run.sequential ?? undefined,
    ks: run.suite.config.pass_k,
    ignoreColumns: run.suite.config.ignore_columns,
    seeds: 'episodes',
    shard: run.shard,
    interrupted: run.interrupted,
    startedAt: run.startedAt.toISOString(),
    durationMs: Date.now() - run.startedAt.getTime(),
    episodesFile: 'episodes.jsonl',
    identicalSides: !run.headOnly && sameFiles(run.checkouts.base, run.checkouts.head),
    policyFrom: run.policyFrom,
    suiteChanges: run.suiteChanges,
    // Judge verdicts on criteria not calibrated for the judge's model warn instead of blocking.
    judgeCalibration: judgeCalibrationFacts(run.suite),
    agentIsolation: run.agentIsolation,
    baselineCache: run.baselineCache,
    filter: run.filter ?? undefined,
    // Spend is counted from the records whenever the agents had models, budget or none.
    ...(Object.keys(run.suite.config.models ?? {}).length > 0
      ? { budget: run.suite.config.budget ?? {} }
      : {}),
    checkoutWarnings: checkoutWarnings(run.checkouts),
  });
}

/** Each side's checkout warnings, as the run printed them (a ref ran, not the uncommitted working tree). */
function checkoutWarnings(checkouts: Partial<Record<Side, Checkout>>): Report['checkout_warnings'] {
  const out = (['base', 'head'] as Side[]).flatMap((side) =>
    (checkouts[side]?.warnings ?? []).map((text) => ({ side, text })),
  );
  return out.length > 0 ? out : undefined;
}

/** Writes report.json, report.md and report.html into `outDir`. */
export function writeReports(whole: Report, outDir: string): CompareResult {
  // Cut to the limits merge enforces, so a head's huge values cannot make its own report refused.
  const report = boundReport(whole);
  mkdirSync(outDir, { recursive: true });
  const reportPath = join(outDir, 'report.json');
  const markdownPath = join(outDir, 'report.md');
  const markdown = renderMarkdown(report, { variant: 'comment' });
  writeFileSync(reportPath, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(markdownPath, markdown);
  const htmlPath = writeHtmlReport(report, outDir);
  return { report, reportPath, markdownPath, markdown, htmlPath };
}
