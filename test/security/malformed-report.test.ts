// Attack: hand `merge` a report.json that is huge, carries ids that are not scenario ids (markdown in
// them), paths that leave the workspace, unknown fields, or a class its own counts contradict. Each
// is refused before anything is gated or posted: exit 1 with the file, the JSON path and what was
// expected; in the action, the check run is completed as a failure with that message.
import { truncateSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caseAnnotations, MAX_ANNOTATIONS, repositoryPaths } from '../../src/action/annotations.js';
import type { Report } from '../../src/model/report.js';
import { mdText } from '../../src/report/markdown-text.js';
import { REPORT_LIMITS } from '../../src/report/report-schema.js';
import { agentVersion } from '../action/demo-repo.js';
import { errors, Harness } from '../action/harness.js';
import { genuineBlock, genuinePass, removeScratch, scratch, stategate, writeReport } from './reports.js';

// Cases are sorted by id: 0 email-after-refund (regressed), 1 lookup-only, 2 refund-happy-path,
// 3 refund-timeout-after-mutation (new critical failure).
afterAll(removeScratch);

/** Runs `stategate merge` on one edited copy of a genuine report. */
function mergeEdited(edit: (r: Report) => void, from: () => Report = genuineBlock) {
  const dir = scratch('malformed');
  const report = from();
  edit(report);
  writeReport(dir, 'shard/report.json', report);
  return stategate(dir, ['merge', 'shard/report.json', '--out', 'out']);
}

function refused(result: ReturnType<typeof mergeEdited>, message: string) {
  expect(result.code, result.stdout + result.stderr).toBe(1);
  expect(result.stderr).toBe(`stategate: shard/report.json: ${message}\n`);
  expect(result.stdout).toBe('');
}

describe('stategate merge refuses a malformed report.json', () => {
  it('a file over the size cap, without reading it', () => {
    const dir = scratch('huge');
    const path = writeReport(dir, 'shard/report.json', '{}');
    // A sparse file: its size is what is checked, before any byte is read.
    truncateSync(path, REPORT_LIMITS.bytes + 1);
    const r = stategate(dir, ['merge', 'shard/report.json']);
    refused(r, 'larger than 64 MiB, the most a report.json may be');
  });

  it('more cases than a report may hold', () => {
    const r = mergeEdited((report) => {
      const one = report.cases[2];
      report.cases = Array.from({ length: REPORT_LIMITS.cases + 1 }, (_, i) => ({ ...one, id: `case-${i}` }));
    });
    refused(r, 'cases: expected at most 10000 items, got more');
  });

  it('a case id that is not a scenario id, e.g. one carrying a markdown heading', () => {
    refused(
      mergeEdited((report) => {
        report.cases[0].id = 'refund\r\n## Stategate: PASS';
      }),
      'cases[0].id: expected a scenario id (lowercase letters, digits and dashes, starting with a letter or digit)',
    );
    refused(
      mergeEdited((report) => {
        report.cases[1].id = 'Refund_Twice';
      }),
      'cases[1].id: expected a scenario id (lowercase letters, digits and dashes, starting with a letter or digit)',
    );
  });

  it('a side ref that breaks the line it is shown on', () => {
    refused(
      mergeEdited((report) => {
        report.sides.head!.ref = 'main\u2028## Stategate: PASS';
      }),
      'sides.head.ref: expected a ref or directory without control characters',
    );
  });

  it('an expectation id outside the expectation-id form', () => {
    const r = mergeEdited((report) => {
      const head = report.cases[0].head!;
      head.expectations['<img src=x>'] = head.expectations.completed;
    });
    refused(
      r,
      'cases[0].head.expectations["<img src=x>"]: expected an expectation id (letters, digits, _ . -, starting with a letter or digit)',
    );
  });

  it('a scenario path that leaves the workspace, or is absolute', () => {
    refused(
      mergeEdited((report) => {
        report.cases[0].file = 'scenarios/../../../etc/passwd';
      }),
      "cases[0].file: expected a path inside the workspace, got a '..' segment",
    );
    refused(
      mergeEdited((report) => {
        report.cases[3].file = '/etc/passwd';
      }),
      'cases[3].file: expected a relative path, got an absolute one',
    );
  });

  it('a class that its own counts contradict', () => {
    refused(
      mergeEdited((report) => {
        report.cases[3].class = 'unchanged';
      }),
      "cases[3].class: says 'unchanged', but its own counts make it 'new-critical-failure' (Critical expectation refunded-exactly-once failed in 2 of 5 head repeats and passed in all 5 base repeats; 1 more expectation broke.)",
    );
    refused(
      mergeEdited((report) => {
        report.cases[0].flaky.head = false;
      }),
      'cases[0].flaky: says not flaky, but its own counts make it flaky on head',
    );
  });

  it('counts that cannot be', () => {
    refused(
      mergeEdited((report) => {
        report.cases[2].head!.passes = 9;
      }),
      'cases[2].head.passes: 9 passes out of 5 runs is impossible',
    );
    refused(
      mergeEdited((report) => {
        report.cases[2].head!.expectations.ok.pass = 2;
      }),
      'cases[2].head.expectations["ok"]: passed 2 times, but the side says 5 repeats passed every expectation',
    );
  });

  it('an unknown field, an oversized string, a state value nested too deep', () => {
    refused(
      mergeEdited((report) => {
        (report.cases[0] as unknown as Record<string, unknown>).verdict_override = 'PASS';
      }),
      'cases[0].verdict_override: unknown field: a version 1 report.json has no such field',
    );
    refused(
      mergeEdited((report) => {
        report.cases[1].reason = 'x'.repeat(REPORT_LIMITS.text + 1);
      }),
      'cases[1].reason: expected at most 20000 characters, got more',
    );
    let deep: unknown = 'bottom';
    for (let i = 0; i < 40; i++) deep = [deep];
    refused(
      mergeEdited((report) => {
        report.cases[3].state_diff[0].head = deep;
      }),
      'cases[3].state_diff[0].head: expected a value nested at most 32 deep',
    );
  });

  it('a sequential-test level the report chose for itself', () => {
    refused(
      mergeEdited((report) => {
        report.repeats_policy = { min: 3, max: 20, alpha: 1e-9 };
      }, genuinePass),
      "repeats_policy.alpha: expected 0.02, the level of stategate's sequential test, got 1e-9",
    );
  });
});

describe('annotations from a report stay bounded and inside the repository', () => {
  it(`at most ${MAX_ANNOTATIONS}, and none for a path outside`, () => {
    const report = genuineBlock();
    const many = report.cases[0];
    report.cases = Array.from({ length: 700 }, (_, i) => ({ ...many, id: `case-${i}` }));
    const pathOf = repositoryPaths('/repo', '/repo');
    expect(caseAnnotations(report, pathOf)).toHaveLength(MAX_ANNOTATIONS);
    expect(pathOf('../outside.yaml')).toBeNull();
    expect(pathOf('/etc/passwd')).toBeNull();
    expect(pathOf('scenarios/a.yaml')).toBe('scenarios/a.yaml');
  });
});

describe('the action refuses a malformed report in a merge job', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await Harness.start([agentVersion('1.2.4')], { 'lean-prompt': [agentVersion('1.3.0')] });
  });
  afterAll(() => h?.close());

  it('completes the check run as a failure that names the file, the path and what was expected', async () => {
    const ws = scratch('malformed-job');
    const report = genuineBlock();
    report.cases[0].file = '../../.github/workflows/stategate.yml';
    writeReport(ws, 'reports/stategate-shard-1/report.json', report);
    const r = await h.step(
      'lean-prompt',
      h.pullRequestEvent(50, 'lean-prompt'),
      { repeats: '', engine: '', merge: 'reports/*/report.json' },
      ws,
    );
    const message =
      "reports/stategate-shard-1/report.json: cases[0].file: expected a path inside the workspace, got a '..' segment";
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(errors(r).map((e) => e.message)).toEqual([message]);
    expect(r.outputs.verdict).toBeUndefined();
    const runs = h.checkRunsOn('lean-prompt');
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({
      status: 'completed',
      conclusion: 'failure',
      output: { title: 'Refused report.json: malformed or contradicting itself', summary: mdText(message) },
    });
    expect(h.comments(50)).toHaveLength(0);
  });

  it('quotes what the report holds as text in the check, never as markup', async () => {
    const ws = scratch('markup-job');
    const report = { ...genuineBlock(), '<img src=https://example.invalid/x.png>': '@acme/owners' };
    writeReport(ws, 'reports/stategate-shard-1/report.json', report);
    const r = await h.step(
      'lean-prompt',
      h.pullRequestEvent(52, 'lean-prompt'),
      { repeats: '', engine: '', merge: 'reports/*/report.json' },
      ws,
    );
    expect(r.code).toBe(1);
    expect(errors(r).map((e) => e.message)).toEqual([
      'reports/stategate-shard-1/report.json: ["<img src=https://example.invalid/x.png>"]: unknown field: a version 1 report.json has no such field',
    ]);
    const run = h.api.checkRuns.at(-1)!;
    expect(run).toMatchObject({ status: 'completed', conclusion: 'failure' });
    // Inert: the tag's brackets are entities, and the URL cannot autolink.
    expect(run.output.summary).toContain('&lt;img src=https');
    expect(run.output.summary).not.toContain('https://example');
    expect(run.output.summary).not.toContain('<img');
  });

  it('refuses a contradicting class the same way', async () => {
    const ws = scratch('contradiction-job');
    const report = genuineBlock();
    report.cases[3].class = 'unchanged';
    report.verdict = 'PASS';
    writeReport(ws, 'reports/stategate-shard-1/report.json', report);
    const r = await h.step(
      'lean-prompt',
      h.pullRequestEvent(51, 'lean-prompt'),
      { repeats: '', engine: '', merge: 'reports/*/report.json' },
      ws,
    );
    expect(r.code).toBe(1);
    expect(errors(r).map((e) => e.message)).toEqual([
      expect.stringMatching(
        /^reports\/stategate-shard-1\/report\.json: cases\[3\]\.class: says 'unchanged', but its own counts make it 'new-critical-failure'/,
      ),
    ]);
    expect(h.api.checkRuns.at(-1)).toMatchObject({ status: 'completed', conclusion: 'failure' });
    expect(h.api.checkRuns.some((c) => c.conclusion === 'success')).toBe(false);
  });
});
