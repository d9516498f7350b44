// The judge's files: the labels file and the calibration file, each problem with file:line:col and
// the field path; and the calibration as the suite loader reads it (missing: none; broken: problems).
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadJudgeCalibration, loadJudgeSection, loadLabels } from '../../src/config/judge-files.js';
import { loadSuite } from '../../src/config/load.js';
import { displayPath } from '../../src/config/source-file.js';
import { formatProblem } from '../../src/config/suite.js';
import { makeSuite, tempRoot, VALID_ENV } from './helpers.js';

let root: { dir: string; remove: () => Promise<void> };
beforeAll(async () => {
  root = await tempRoot();
});
afterAll(() => root.remove());

async function file(name: string, text: string): Promise<string> {
  const abs = path.join(root.dir, name);
  await writeFile(abs, text);
  return abs;
}

const CALIBRATED = {
  criterion: 'The reply is polite',
  model: 'small',
  labels: 20,
  judge_errors: 0,
  n: 20,
  agreement: 0.8,
  kappa: 0.6,
  table: { both_pass: 8, judge_pass_human_fail: 2, judge_fail_human_pass: 2, both_fail: 8 },
  calibrated: true,
  why_not: [],
};

describe('the labels file', () => {
  it('loads labels, the threshold defaulting as in judge expectations', async () => {
    const abs = await file(
      'labels.yaml',
      [
        'labels:',
        '  - criterion: "The reply tells the customer the refund was issued once"',
        '    message: "Please refund ORD-1001"',
        '    reply: "I refunded ORD-1001 once."',
        '    label: pass',
        '  - criterion: "The reply tells the customer the refund was issued once"',
        '    message: "Please refund ORD-1002"',
        '    reply: "I refunded ORD-1002 twice."',
        '    label: fail',
        '    threshold: 0.9',
        '',
      ].join('\n'),
    );
    const loaded = await loadLabels(abs);
    expect(loaded.ok && loaded.value.map((l) => [l.label, l.threshold])).toEqual([
      ['pass', 0.7],
      ['fail', 0.9],
    ]);
  });

  it('reports every problem at once with file:line:col, the field path and what was expected', async () => {
    const abs = await file(
      'broken-labels.yaml',
      [
        'labels:', // 1
        '  - criterion: "Polite"', // 2
        '    message: "Hi"', // 3
        '    reply: "Hello"', // 4
        '    label: maybe', // 5
        '  - criterion: "Polite"', // 6
        '    message: "Hi"', // 7
        '    label: pass', // 8
        '    threshold: 2', // 9
        '    score: 1', // 10
        '',
      ].join('\n'),
    );
    const loaded = await loadLabels(abs);
    expect(loaded.ok).toBe(false);
    const lines = loaded.ok ? [] : loaded.problems.map(formatProblem);
    const name = displayPath(abs);
    expect(lines).toEqual([
      `${name}:5:12: labels[0].label: expected one of pass | fail, got 'maybe'`,
      `${name}:6:5: labels[1].reply: missing required field 'reply'`,
      `${name}:9:16: labels[1].threshold: expected a number <= 1, got 2`,
      `${name}:10:5: labels[1].score: unknown key 'score' (expected one of criterion, message, reply, label, threshold)`,
    ]);
  });

  it('says a missing file, a YAML error and an empty list precisely', async () => {
    const missing = await loadLabels(path.join(root.dir, 'nope.yaml'));
    expect(!missing.ok && missing.problems[0].message).toBe('file not found');
    const bad = await loadLabels(await file('bad.yaml', 'labels:\n  - criterion: "x\n'));
    expect(!bad.ok && formatProblem(bad.problems[0])).toMatch(/bad\.yaml:\d+:\d+: YAML: /);
    const empty = await loadLabels(await file('empty.yaml', 'labels: []\n'));
    expect(!empty.ok && formatProblem(empty.problems[0])).toMatch(
      /empty\.yaml:1:9: labels: expected a non-empty list/,
    );
  });
});

describe('the calibration file', () => {
  it('is read with its hash; a missing one is no calibration', async () => {
    const abs = await file('cal.json', JSON.stringify({ version: 1, criteria: [CALIBRATED] }, null, 2));
    const loaded = await loadJudgeCalibration(abs, root.dir);
    expect(loaded.ok && loaded.value).toMatchObject({ file: 'cal.json', criteria: [{ model: 'small' }] });
    expect(loaded.ok && loaded.value?.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(await loadJudgeCalibration(path.join(root.dir, 'none.json'), root.dir)).toEqual({
      ok: true,
      value: null,
    });
  });

  it('a malformed one is a problem at its line: bad JSON, a wrong field, the same criterion and model twice', async () => {
    const bad = await loadJudgeCalibration(
      await file('bad.json', '{"version": 1, "criteria": [\n'),
      root.dir,
    );
    expect(!bad.ok && formatProblem(bad.problems[0])).toMatch(/bad\.json:\d+:\d+: YAML: /);
    const text = JSON.stringify(
      {
        version: 1,
        criteria: [CALIBRATED, { ...CALIBRATED, table: { ...CALIBRATED.table, both_fail: -1 } }],
      },
      null,
      2,
    );
    const wrong = await loadJudgeCalibration(await file('wrong.json', text), root.dir);
    const line = text.split('\n').findIndex((l) => l.includes('"both_fail": -1')) + 1;
    expect(!wrong.ok && wrong.problems.map(formatProblem)).toEqual([
      expect.stringMatching(
        new RegExp(
          `wrong\\.json:${line}:\\d+: criteria\\[1\\]\\.table\\.both_fail: expected a number >= 0, got -1`,
        ),
      ),
    ]);
    const twice = await loadJudgeCalibration(
      await file('twice.json', JSON.stringify({ version: 1, criteria: [CALIBRATED, CALIBRATED] }, null, 2)),
      root.dir,
    );
    expect(!twice.ok && twice.problems[0].message).toBe(
      'criterion "The reply is polite" with model "small" is given twice',
    );
  });

  it('the suite loader reads it beside stategate.yml, or where judge.calibration says; broken stops the load', async () => {
    const plain = await loadSuite(path.join(await makeSuite(root.dir), 'stategate.yml'), { env: VALID_ENV });
    expect(plain.ok && plain.suite.judgeCalibration).toBeNull();

    const json = JSON.stringify({ version: 1, criteria: [CALIBRATED] });
    const beside = await makeSuite(root.dir, { 'judge-calibration.json': json });
    const found = await loadSuite(path.join(beside, 'stategate.yml'), { env: VALID_ENV });
    expect(found.ok && found.suite.judgeCalibration?.file).toBe('judge-calibration.json');

    const elsewhere = await makeSuite(root.dir, { 'calibration/judge.json': json });
    const config = path.join(elsewhere, 'stategate.yml');
    const text = await readFile(config, 'utf8');
    await writeFile(
      config,
      text.replace('  model: small\n', '  model: small\n  calibration: calibration/judge.json\n'),
    );
    const named = await loadSuite(config, { env: VALID_ENV });
    expect(named.ok && named.suite.judgeCalibration?.file).toBe('calibration/judge.json');

    const broken = await makeSuite(root.dir, { 'judge-calibration.json': '{"version": 2, "criteria": []}' });
    const refused = await loadSuite(path.join(broken, 'stategate.yml'), { env: VALID_ENV });
    expect(!refused.ok && refused.problems.map(formatProblem)).toEqual([
      expect.stringMatching(/judge-calibration\.json:1:13: version: expected 1, got 2$/),
    ]);
  });
});

describe('the judge section alone', () => {
  it('is validated without the rest of stategate.yml', async () => {
    const dir = await makeSuite(root.dir);
    // An unset variable outside judge: does not matter to calibrating.
    const loaded = await loadJudgeSection(path.join(dir, 'stategate.yml'), {});
    expect(loaded.ok && loaded.value.judge).toMatchObject({ model: 'small', timeout: '30s' });
    const none = await loadJudgeSection(await file('no-judge.yml', 'version: 1\n'), {});
    expect(!none.ok && none.problems[0].message).toBe('no judge: section (url, model): see docs/judge.md');
  });
});
