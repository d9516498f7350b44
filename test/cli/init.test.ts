// `stategate init` as a newcomer uses it, through the bundled command: the suite it writes
// validates and passes `run` on both engines, the workflow it writes is right for the language, a
// regression of the scaffold's own agent is a BLOCK under `compare`, and it never overwrites.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseInputs } from '../../src/action/inputs.js';
import { inputEnv } from '../action/runner.js';
import { git } from '../helpers/demo-repo.js';
import { stategate } from '../helpers/stategate-cli.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function emptyDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sg-init-'));
  dirs.push(dir);
  return dir;
}

/** Every file under `dir`, relative, sorted (.git left out). */
function filesUnder(dir: string, prefix = ''): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true })
    .filter((e) => e.name !== '.git')
    .flatMap((e) => (e.isDirectory() ? filesUnder(dir, join(prefix, e.name)) : [join(prefix, e.name)]))
    .sort();
}

function edit(file: string, from: string, to: string): void {
  const text = readFileSync(file, 'utf8');
  if (!text.includes(from)) throw new Error(`${file} has no ${JSON.stringify(from)}`);
  writeFileSync(file, text.replace(from, to));
}

const LANGS = [
  {
    lang: 'python',
    agent: 'agent/agent.py',
    engine: 'postgres',
    toolchain: 'actions/setup-python@v5',
    // The newcomer's regression: the retry no longer carries the idempotency key.
    regress: [', "idempotency_key": key}', '}'],
  },
  {
    lang: 'typescript',
    agent: 'agent/agent.mjs',
    engine: 'embedded',
    toolchain: 'actions/setup-node@v4',
    regress: [', idempotency_key: key }', ' }'],
  },
] as const;

const SUITE = [
  '.github/workflows/stategate.yml',
  'db/fixtures.yaml',
  'db/schema.sql',
  'scenarios/refund-happy-path.yaml',
  'scenarios/refund-timeout-after-mutation.yaml',
  'stategate.yml',
  'twins/orders.yaml',
];

describe.each(LANGS)('stategate init --lang $lang', ({ lang, agent, engine, toolchain, regress }) => {
  it(`writes a suite that validates and passes run on the ${engine} engine`, { timeout: 300_000 }, () => {
    const dir = emptyDir();
    const init = stategate(dir, ['init', '--lang', lang]);
    expect(init.stderr).toBe('');
    expect(init.code).toBe(0);
    expect(filesUnder(dir)).toEqual([...SUITE, agent].sort());
    for (const f of [...SUITE, agent]) expect(init.stdout).toContain(`  ${f}\n`);
    expect(init.stdout).toContain('stategate compare --base HEAD --head .');

    const validate = stategate(dir, ['validate', '--engine', engine]);
    expect(validate.stderr).toBe('');
    expect(validate.stdout).toMatch(/stategate\.yml: ok \(2 scenarios, 2 tools/);
    expect(validate.code).toBe(0);

    const run = stategate(dir, ['run', '--repeats', '2', '--engine', engine, '--no-color']);
    expect(run.stdout, run.stderr).toContain('Stategate: PASS');
    expect(run.code).toBe(0);
    const report = JSON.parse(readFileSync(join(dir, '.stategate', 'report.json'), 'utf8'));
    expect(report.cases.map((c: { id: string }) => c.id)).toEqual([
      'refund-happy-path',
      'refund-timeout-after-mutation',
    ]);
    for (const c of report.cases) expect(c.head.passes, c.id).toBe(2);
  });

  it('blocks the newcomer’s own regression of the scaffold agent under compare', {
    timeout: 300_000,
  }, () => {
    const dir = emptyDir();
    expect(stategate(dir, ['init', '--lang', lang]).code).toBe(0);
    git(dir, 'init', '-q');
    git(dir, 'add', '-A');
    git(dir, '-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-qm', 'suite');
    edit(join(dir, agent), regress[0], regress[1]);

    const res = stategate(dir, [
      'compare',
      '--base',
      'HEAD',
      '--head',
      '.',
      '--repeats',
      '2',
      '--engine',
      'postgres',
      '--no-color',
    ]);
    expect(res.stdout, res.stderr).toContain('Stategate: BLOCK');
    expect(res.code).toBe(2);
    const report = JSON.parse(readFileSync(join(dir, '.stategate', 'report.json'), 'utf8'));
    const byId = Object.fromEntries(report.cases.map((c: { id: string; class: string }) => [c.id, c.class]));
    expect(byId).toEqual({
      'refund-happy-path': 'unchanged',
      'refund-timeout-after-mutation': 'new-critical-failure',
    });
  });

  it('writes a workflow with the language’s toolchain, a time limit and cancel-in-progress', () => {
    const dir = emptyDir();
    expect(stategate(dir, ['init', '--lang', lang]).code).toBe(0);
    const wf = parse(readFileSync(join(dir, '.github/workflows/stategate.yml'), 'utf8'));
    expect(wf.on).toBe('pull_request');
    expect(wf.concurrency['cancel-in-progress']).toBe(true);
    expect(wf.concurrency.group).toContain('github.event.pull_request.number');
    const job = wf.jobs.gate;
    expect(job['timeout-minutes']).toBeGreaterThan(0);
    const uses = job.steps.map((s: { uses?: string }) => s.uses);
    expect(uses).toContain(toolchain);
    // The toolchain is there before the action starts the agent.
    const gate = job.steps.find((s: { uses?: string }) => /\/stategate@v\d+$/.test(s.uses ?? ''));
    expect(uses.indexOf(toolchain)).toBeLessThan(job.steps.indexOf(gate));
    const env = inputEnv(gate.with, 'ghs_init');
    expect(() => parseInputs((name) => env[`INPUT_${name.toUpperCase()}`] ?? '')).not.toThrow();
    const checkout = job.steps.find((s: { uses?: string }) => /^actions\/checkout@/.test(s.uses ?? ''));
    expect(checkout.with['persist-credentials']).toBe(false);
  });
});

describe('stategate init refuses', () => {
  it('to overwrite: it names every file that exists and writes nothing', () => {
    const mixed = emptyDir();
    writeFileSync(join(mixed, 'stategate.yml'), 'mine\n');
    const res = stategate(mixed, ['init']);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(
      'stategate: init: stategate.yml already exists; nothing was written (move it away, or init another directory)\n',
    );
    expect(filesUnder(mixed)).toEqual(['stategate.yml']);
    expect(readFileSync(join(mixed, 'stategate.yml'), 'utf8')).toBe('mine\n');
  });

  it('to overwrite in a DIR it is given, naming each file there', () => {
    const parent = emptyDir();
    const first = stategate(parent, ['init', 'repo']);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('  repo/stategate.yml\n');
    expect(first.stdout).toContain('  cd repo\n');
    const before = filesUnder(join(parent, 'repo'));
    const res = stategate(parent, ['init', '--lang', 'typescript', 'repo']);
    expect(res.code).toBe(1);
    // The typescript agent is new, but the rest exists: nothing is written, not even the agent.
    expect(res.stderr).toContain('repo/stategate.yml, repo/db/schema.sql');
    expect(res.stderr).toContain('repo/.github/workflows/stategate.yml already exist;');
    expect(res.stderr).not.toContain('agent.mjs');
    expect(filesUnder(join(parent, 'repo'))).toEqual(before);
  });

  it('a language it has no agent for, and two directories', () => {
    const dir = emptyDir();
    const lang = stategate(dir, ['init', '--lang', 'ruby']);
    expect(lang.code).toBe(1);
    expect(lang.stderr).toBe('stategate: init: --lang: expected python or typescript, got "ruby"\n');
    const two = stategate(dir, ['init', 'a', '--dir', 'b']);
    expect(two.code).toBe(1);
    expect(two.stderr).toBe('stategate: init: one directory, got "a" and "b"\n');
    expect(filesUnder(dir)).toEqual([]);
  });
});
