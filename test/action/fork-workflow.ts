// The pull_request_target workflow docs/action.md shows for forks, read from the doc itself, so the
// tests run and check the very text a user copies.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { PROJECT } from './runner.js';

export const FORK_WORKFLOW_NAME = '# .github/workflows/stategate-fork.yml';

export interface WorkflowStep {
  uses?: string;
  run?: string;
  with?: Record<string, string | number | boolean>;
  env?: Record<string, string>;
}

export interface Workflow {
  on: Record<string, unknown>;
  permissions?: Record<string, string>;
  env?: Record<string, string>;
  jobs: Record<
    string,
    { permissions?: Record<string, string>; env?: Record<string, string>; steps: WorkflowStep[] }
  >;
}

/** The text of the fork workflow's yaml block in a markdown file. */
export function forkWorkflowText(doc = 'docs/action.md'): string {
  const markdown = readFileSync(join(PROJECT, doc), 'utf8');
  const block = [...markdown.matchAll(/^```yaml\n([\s\S]*?)^```$/gm)]
    .map((m) => m[1])
    .find((text) => text.startsWith(FORK_WORKFLOW_NAME));
  if (!block) throw new Error(`${doc} has no yaml block starting with ${FORK_WORKFLOW_NAME}`);
  return block;
}

export function forkWorkflow(doc?: string): Workflow {
  return parse(forkWorkflowText(doc)) as Workflow;
}

/** The stategate step of the fork workflow. */
export function stategateStep(workflow: Workflow): WorkflowStep {
  const step = Object.values(workflow.jobs)
    .flatMap((j) => j.steps)
    .find((s) => /\/stategate@/.test(s.uses ?? ''));
  if (!step) throw new Error('the fork workflow has no stategate step');
  return step;
}
