// Attack: a suite that reads files from outside its directory (a `../` glob, an absolute path, a
// linked scenario, a linked directory, a linked fixture, calibration or stategate.yml) so their
// contents get quoted in problem messages, which the action publishes. Each must be refused at the
// config entry's file:line:col, and the secret must never appear in any message.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, symlink, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadJudgeSection } from '../../src/config/judge-files.js';
import { loadSuite } from '../../src/config/load.js';
import type { LoadResult, Problem } from '../../src/config/suite.js';
import { makeSuite, tempRoot, VALID_DIR, VALID_ENV } from '../config/helpers.js';

const CANARY = `CANARY-${randomBytes(8).toString('hex')}`;
let parent: string;
let remove: () => Promise<void>;
let outside: string;
let validConfig: string;

beforeAll(async () => {
  ({ dir: parent, remove } = await tempRoot());
  outside = path.join(parent, 'outside');
  await mkdir(path.join(outside, 'dir'), { recursive: true });
  // Each is shaped so that, were it parsed, a problem message would quote the secret.
  await writeFile(path.join(outside, 'hosts'), `${CANARY}\n`);
  await writeFile(path.join(outside, 'secret.yaml'), `${CANARY}\n`);
  await writeFile(path.join(outside, 'dir', 'scenario.yaml'), `id: ${CANARY}\nbogus: ${CANARY}\n`);
  await writeFile(path.join(outside, 'secret.sql'), `SELECT '${CANARY}' FROM ${CANARY};\n`);
  await writeFile(path.join(outside, 'calibration.json'), `{"version": "${CANARY}"}\n`);
  await writeFile(path.join(outside, 'stategate.yml'), `version: ${CANARY}\n`);
  validConfig = await readFile(path.join(VALID_DIR, 'stategate.yml'), 'utf8');
});
afterAll(async () => {
  await remove?.();
});

/** A copy of the valid suite with stategate.yml edited by `replace` ([from, to] pairs). */
async function suiteWith(replace: [string, string][]): Promise<string> {
  let text = validConfig;
  for (const [from, to] of replace) {
    expect(text).toContain(from);
    text = text.replace(from, to);
  }
  return makeSuite(parent, { 'stategate.yml': text });
}

async function load(dir: string): Promise<LoadResult> {
  return loadSuite(path.join(dir, 'stategate.yml'), { env: VALID_ENV });
}

/** The 1-based line of stategate.yml holding `needle`. */
async function lineOf(dir: string, needle: string): Promise<number> {
  const lines = (await readFile(path.join(dir, 'stategate.yml'), 'utf8')).split('\n');
  const i = lines.findIndex((l) => l.includes(needle));
  expect(i).toBeGreaterThanOrEqual(0);
  return i + 1;
}

/** The load failed; every problem is positioned, none quotes the canary; returns the problems. */
function refused(result: LoadResult): Problem[] {
  expect(result.ok).toBe(false);
  const problems = result.ok ? [] : result.problems;
  for (const p of problems) {
    expect(p.line).toBeGreaterThanOrEqual(1);
    expect(p.col).toBeGreaterThanOrEqual(1);
  }
  expect(JSON.stringify(problems)).not.toContain(CANARY);
  return problems;
}

function findProblem(problems: Problem[], text: string): Problem {
  const found = problems.find((p) => p.message.includes(text));
  expect(found, `no problem says ${JSON.stringify(text)}: ${JSON.stringify(problems)}`).toBeDefined();
  return found!;
}

describe('suite paths that leave the suite directory', () => {
  it("refuses a `../` glob at its entry: scenarios[1] '../outside/host*' leaves the suite directory", async () => {
    const dir = await suiteWith([
      ['scenarios: scenarios/**/*.yaml', "scenarios: [scenarios/**/*.yaml, '../outside/host*']"],
    ]);
    const p = findProblem(
      refused(await load(dir)),
      "scenarios[1] '../outside/host*' leaves the suite directory",
    );
    expect(p.file).toBe(path.join(dir, 'stategate.yml'));
    expect(p.line).toBe(await lineOf(dir, "'../outside/host*'"));
    expect(p.message).toContain(`suite files must be inside ${dir}`);
  });

  it('refuses `..` hidden mid-glob, and a glob that goes out and comes back is fine', async () => {
    const out = await suiteWith([
      ['twins: [twins/*.yaml]', "twins: [twins/*.yaml, 'twins/../../outside/*.yaml']"],
    ]);
    findProblem(refused(await load(out)), "twins[1] 'twins/../../outside/*.yaml' leaves the suite directory");
    const back = await suiteWith([
      ['scenarios: scenarios/**/*.yaml', 'scenarios: scenarios/../scenarios/**/*.yaml'],
    ]);
    expect((await load(back)).ok).toBe(true);
  });

  it('refuses an absolute schema path at its entry', async () => {
    const secret = path.join(outside, 'secret.sql');
    const dir = await suiteWith([['schema: [db/schema.sql]', `schema: [db/schema.sql, '${secret}']`]]);
    const p = findProblem(refused(await load(dir)), `database.schema[1] '${secret}' is an absolute path`);
    expect(p.line).toBe(await lineOf(dir, secret));
  });

  it('refuses a scenario that is a link to a file outside', async () => {
    const dir = await suiteWith([]);
    await symlink(path.join(outside, 'secret.yaml'), path.join(dir, 'scenarios', 'refunds', 'evil.yaml'));
    const p = findProblem(
      refused(await load(dir)),
      "scenarios 'scenarios/**/*.yaml' matches scenarios/refunds/evil.yaml, a link to a file outside the suite directory",
    );
    expect(p.line).toBe(await lineOf(dir, 'scenarios: scenarios/**/*.yaml'));
  });

  it('never walks a linked directory out of the suite, and refuses a glob through it', async () => {
    const walked = await suiteWith([]);
    await symlink(path.join(outside, 'dir'), path.join(walked, 'scenarios', 'linked'));
    const result = await load(walked);
    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(Object.keys(result.suite.files).some((f) => f.includes('linked'))).toBe(false);
      expect(JSON.stringify(result.suite.files)).not.toContain(CANARY);
    }

    const through = await suiteWith([
      ['scenarios: scenarios/**/*.yaml', 'scenarios: [scenarios/**/*.yaml, scenarios/linked/*.yaml]'],
    ]);
    await symlink(path.join(outside, 'dir'), path.join(through, 'scenarios', 'linked'));
    const p = findProblem(
      refused(await load(through)),
      "scenarios[1] 'scenarios/linked/*.yaml' matches scenarios/linked/scenario.yaml, a link to a file outside",
    );
    expect(p.line).toBe(await lineOf(through, 'scenarios/linked/*.yaml'));
  });

  it('refuses a fixture that is a link to a file outside', async () => {
    const dir = await suiteWith([]);
    await unlink(path.join(dir, 'db', 'fixtures.yaml'));
    await symlink(path.join(outside, 'secret.yaml'), path.join(dir, 'db', 'fixtures.yaml'));
    const p = findProblem(
      refused(await load(dir)),
      "database.fixtures[0] 'db/fixtures.yaml' is a link to a file outside the suite directory",
    );
    expect(p.line).toBe(await lineOf(dir, 'fixtures: [db/fixtures.yaml'));
  });

  it('refuses a judge calibration outside, by name and by link', async () => {
    const byName = await suiteWith([
      ['model: small', 'model: small\n  calibration: ../outside/calibration.json'],
    ]);
    const p = findProblem(
      refused(await load(byName)),
      "judge.calibration '../outside/calibration.json' leaves the suite directory",
    );
    expect(p.line).toBe(await lineOf(byName, 'calibration:'));
    // `stategate judge calibrate` writes the file it names: it must refuse the same entry.
    const section = await loadJudgeSection(path.join(byName, 'stategate.yml'), VALID_ENV);
    expect(section.ok).toBe(false);
    if (!section.ok) expect(section.problems[0].message).toContain('leaves the suite directory');
    const byLink = await suiteWith([]);
    await symlink(path.join(outside, 'calibration.json'), path.join(byLink, 'judge-calibration.json'));
    findProblem(
      refused(await load(byLink)),
      "judge 'judge-calibration.json' is a link to a file outside the suite directory",
    );
  });

  it('refuses a stategate.yml that is a link to a file outside', async () => {
    const dir = await suiteWith([]);
    await unlink(path.join(dir, 'stategate.yml'));
    await symlink(path.join(outside, 'stategate.yml'), path.join(dir, 'stategate.yml'));
    findProblem(refused(await load(dir)), 'stategate.yml is a link to a file outside');
  });

  it('follows links that stay inside the suite', async () => {
    const dir = await suiteWith([]);
    await mkdir(path.join(dir, 'shared'));
    await rename(path.join(dir, 'twins', 'orders.yaml'), path.join(dir, 'shared', 'orders.yaml'));
    await symlink('../shared/orders.yaml', path.join(dir, 'twins', 'orders.yaml'));
    const result = await load(dir);
    expect(result.ok ? [] : result.problems).toEqual([]);
    if (result.ok) expect(Object.keys(result.suite.files)).toContain('twins/orders.yaml');
  });
});
