// The docs show what the tests run: the README workflow is the fixture the end-to-end tests read,
// every input and output of action.yml is documented, and every documented step's inputs parse.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseInputs } from '../../src/action/inputs.js';
import { WORKFLOW_FIXTURE } from './harness.js';
import { inputEnv, PROJECT } from './runner.js';

const read = (path: string) => readFileSync(join(PROJECT, path), 'utf8');
const fixture = readFileSync(WORKFLOW_FIXTURE, 'utf8');
const action = parse(read('action.yml')) as {
  inputs: Record<string, { default: string; description: string }>;
  outputs: Record<string, { description: string }>;
};
const guide = read('docs/action.md');

function yamlBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```yaml\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
}

describe('action docs', () => {
  it('the README section and the guide show the tested workflow verbatim', () => {
    expect(read('docs/action-readme-section.md')).toContain(`\`\`\`yaml\n${fixture}\`\`\``);
    expect(read('README.md')).toContain(`\`\`\`yaml\n${fixture}\`\`\``);
    expect(guide).toContain(`\`\`\`yaml\n${fixture}\`\`\``);
  });

  it('every actions/checkout step in the README and the docs keeps the token off disk', () => {
    // actions/checkout persists the job's token in .git/config unless told not to; the agent under
    // review runs in that checkout.
    const markdown = ['README.md', 'docs/action.md', 'docs/action-readme-section.md'].map(read);
    const checkouts = [...markdown.flatMap(yamlBlocks), fixture]
      .map((text) => parse(text))
      .flatMap((doc) => {
        const jobs = doc?.jobs ? Object.values(doc.jobs as Record<string, { steps: unknown[] }>) : [];
        return jobs.flatMap((j) => j.steps) as { uses?: string; with?: Record<string, unknown> }[];
      })
      .filter((s) => /^actions\/checkout@/.test(s.uses ?? ''));
    expect(checkouts.length).toBeGreaterThanOrEqual(8);
    for (const step of checkouts)
      expect(step.with?.['persist-credentials'], JSON.stringify(step)).toBe(false);
  });

  it('documents every input with its default, and every output', () => {
    const rows = [...guide.matchAll(/^\| `([a-z-]+)` \| `([^`]*)` \|/gm)].map((m) => [m[1], m[2]]);
    expect(Object.fromEntries(rows)).toEqual(
      Object.fromEntries(
        Object.entries(action.inputs).map(([k, v]) => [k, v.default === '' ? "''" : v.default]),
      ),
    );
    for (const name of Object.keys(action.outputs)) expect(guide).toContain(`\`${name}\``);
    for (const [name, spec] of Object.entries(action.inputs)) expect(spec.description, name).toMatch(/\S/);
  });

  it('every stategate step in the docs sets declared inputs that parse together', () => {
    const steps = [...yamlBlocks(guide), ...yamlBlocks(read('docs/action-readme-section.md'))]
      .map((text) => parse(text))
      .flatMap((doc) => {
        const jobs = doc?.jobs ? Object.values(doc.jobs as Record<string, { steps: unknown[] }>) : [];
        const steps = jobs.length > 0 ? jobs.flatMap((j) => j.steps) : Array.isArray(doc) ? doc : [];
        return (steps as { uses?: string; with?: Record<string, string> }[]).filter((s) =>
          /\/stategate@v1$/.test(s.uses ?? ''),
        );
      });
    expect(steps.length).toBeGreaterThanOrEqual(5);
    for (const s of steps) {
      const values = Object.fromEntries(
        Object.entries(s.with ?? {}).map(([k, v]) => [
          k,
          String(v).replace(/\$\{\{ matrix\.shard \}\}/, '1'),
        ]),
      );
      const env = inputEnv(values, 'ghs_docs');
      expect(() => parseInputs((name) => env[`INPUT_${name.toUpperCase()}`] ?? '')).not.toThrow();
    }
  });
});
