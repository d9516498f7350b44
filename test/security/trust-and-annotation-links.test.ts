// Attack: the action's trust decision and the files it reads after the agent ran.
//  - A pull_request payload whose head repository is missing (a fork deleted after the PR was
//    opened: GitHub sends `head.repo: null`) is not known to be this repository: a merge of its
//    reports must be unverified, not trusted by default.
//  - In process isolation the head's agent can write its own checkout, so it can swap a scenario file
//    for a symlink (to a file outside the repository, or a FIFO that blocks a read forever, leaving
//    the check run in progress). Annotations take their lines from the report's cases, never from
//    the checkout, so nothing the link points at reaches an annotation.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { caseAnnotations, repositoryPaths } from '../../src/action/annotations.js';
import { untrustedReason } from '../../src/action/trust.js';
import { EVENT_SHA, readEventFile } from '../helpers/event-file.js';

const dir = mkdtempSync(join(tmpdir(), 'sg-trust-links-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const SHA = EVENT_SHA;
const event = (name: string, payload: unknown) => readEventFile(dir, name, payload);

describe('trust and paths in the action', () => {
  it('a merge in a pull_request run whose head repository the payload does not name is unverified', () => {
    const payload = {
      pull_request: {
        number: 7,
        head: { sha: SHA, repo: null },
        base: { sha: 'b'.repeat(40), repo: { full_name: 'acme/refunds', fork: false } },
      },
    };
    expect(untrustedReason(event('pull_request', payload), 'auto', true)).not.toBeNull();
  });

  it('annotations do not read a scenario file that links out of the repository', () => {
    const outside = join(dir, 'outside-secret.txt');
    writeFileSync(outside, 'token_a: 1\ntoken_b: 2\ntoken_c: 3\ntoken_d: 4\nid: attack\n');
    const repo = join(dir, 'head');
    mkdirSync(join(repo, 'scenarios'), { recursive: true });
    // What the head's agent leaves behind in its writable checkout during an episode.
    symlinkSync(outside, join(repo, 'scenarios', 'attack.yaml'));
    const side = { runs: 1, passes: 0, expectations: {} };
    const [at] = caseAnnotations(
      {
        version: 1,
        verdict: 'WARN',
        engine: 'postgres',
        pin: { suite_hash: 'x', template_hash: 'y', scenarios: {} },
        sides: { base: null, head: { ref: 'h', sha: null } },
        counts: { 'new-critical-failure': 0, regressed: 0, improved: 0, unchanged: 0, incomplete: 1 },
        cases: [
          {
            id: 'attack',
            class: 'incomplete',
            flaky: { base: false, head: false },
            base: null,
            head: side,
            divergence: null,
            state_diff: [],
            file: 'scenarios/attack.yaml',
          },
        ],
      },
      repositoryPaths(repo, repo),
    );
    // Line 5 would come from the file outside: the link was followed.
    expect(at).toMatchObject({ path: 'scenarios/attack.yaml', start_line: 1 });
  });
});
