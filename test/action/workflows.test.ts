// The repository's own workflows (.github/workflows): every step that runs this action (`uses: ./`)
// passes inputs action.yml declares and that parse together; CI runs the commands the README gives
// for development; check-dist fails on a stale dist/.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseInputs } from '../../src/action/inputs.js';
import { inputEnv, PROJECT } from './runner.js';

interface Step {
  uses?: string;
  run?: string;
  with?: Record<string, string | number | boolean>;
}
interface Workflow {
  on: unknown;
  jobs: Record<string, { steps: Step[] }>;
}

const DIR = join(PROJECT, '.github', 'workflows');
const workflows: Record<string, Workflow> = Object.fromEntries(
  readdirSync(DIR)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()
    .map((f) => [f, parse(readFileSync(join(DIR, f), 'utf8')) as Workflow]),
);
const steps = (wf: Workflow) => Object.values(wf.jobs).flatMap((j) => j.steps);
/** Each shell line of a workflow's `run:` steps, trimmed. */
const runLines = (wf: Workflow) =>
  steps(wf).flatMap((s) =>
    (s.run ?? '')
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean),
  );

/** The commands of the README's Development block, comments dropped. */
function readmeDevCommands(): string[] {
  const readme = readFileSync(join(PROJECT, 'README.md'), 'utf8');
  const block = /^## Development\n[\s\S]*?^```sh\n([\s\S]*?)^```$/m.exec(readme);
  if (!block) throw new Error('README.md has no ```sh block under ## Development');
  return block[1]
    .split('\n')
    .map((l) => l.replace(/#.*$/, '').trim())
    .filter(Boolean);
}

describe('.github/workflows', () => {
  it('has ci, check-dist and the demo', () => {
    expect(Object.keys(workflows)).toEqual(expect.arrayContaining(['ci.yml', 'check-dist.yml', 'demo.yml']));
  });

  it('passes this action only inputs action.yml declares, with values that parse', () => {
    const own = Object.entries(workflows).flatMap(([file, wf]) =>
      steps(wf)
        .filter((s) => s.uses === './' || s.uses === '.')
        .map((s) => ({ file, step: s })),
    );
    expect(own.map((o) => o.file)).toContain('demo.yml');
    for (const { file, step } of own) {
      // inputEnv refuses an input action.yml does not declare, as the runner warns and ignores it.
      const env = inputEnv(step.with ?? {}, 'ghs_workflow');
      expect(() => parseInputs((name) => env[`INPUT_${name.toUpperCase()}`] ?? ''), file).not.toThrow();
    }
  });

  it('refuses a `uses: ./` input that action.yml does not declare', () => {
    expect(() => inputEnv({ 'fail-on': 'block', failon: 'warn' }, 'ghs_workflow')).toThrow(
      /input failon, which action.yml does not declare/,
    );
  });

  it('runs the demo on pull requests', () => {
    const on = workflows['demo.yml'].on;
    const events = typeof on === 'string' ? [on] : Array.isArray(on) ? on : Object.keys(on as object);
    expect(events).toContain('pull_request');
  });

  it("ci runs the README's development commands, the tests included", () => {
    const commands = readmeDevCommands();
    expect(commands).toContain('npm test');
    const lines = runLines(workflows['ci.yml']);
    for (const command of commands) expect(lines, command).toContain(command);
  });

  it('check-dist rebuilds and fails on any difference in dist/, untracked files included', () => {
    const lines = runLines(workflows['check-dist.yml']);
    const build = lines.indexOf('npm run build');
    expect(build).toBeGreaterThan(lines.indexOf('npm ci --no-audit --no-fund'));
    const diff = lines.findIndex((l) => /git diff --exit-code\b.*-- dist\/?/.test(l));
    expect(diff).toBeGreaterThan(build);
    expect(lines.some((l) => /git status --porcelain -- dist\/?/.test(l))).toBe(true);
  });
});
