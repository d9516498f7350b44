// Attack: what `merge` copies from a report without checking it. The class, counts and verdict
// are recomputed, but the report's own `policy_from` (whose gate decided) is copied into the merged
// report and shown as "Gate policy from ..." above the cases, although merge decided with the gate
// of ITS checkout. A fork's report (workflow_run) so states, in the base repository's comment and
// check, whatever policy story it likes; an honest `policy-from: head` shard is shown as gated by
// the head while the merge used another gate.
import { describe, expect, it } from 'vitest';
import { mergeReports } from '../../src/compare/merge.js';
import { compareSuite } from '../../src/compare/suite.js';
import { renderMarkdown } from '../../src/report/markdown.js';
import { facts, timeoutCase, unchangedCase } from '../report/fixtures.js';

describe("merge and the report's word on its policy", () => {
  it("the merged report does not show the shard's policy source as the merge's own", () => {
    const forged = {
      ...compareSuite({ ...facts(), cases: [timeoutCase(), unchangedCase('lookup-only')] }),
      policy_from: {
        side: 'base' as const,
        reason: "the base's stategate.yml, reviewed and approved by @acme/release-owners",
      },
    };
    const merged = mergeReports([forged], {
      gate: { block: [], warn: ['new-critical-failure'] },
      unverified: 'the triggering workflow run came from mallory/refunds',
    });
    const comment = renderMarkdown(merged, { variant: 'comment' });
    expect(comment).not.toContain('reviewed and approved');
  });
});
