// `stategate judge calibrate` as a user runs it: the bundled command, a labels file, and a loopback
// server speaking the chat-completions format whose judging depends on the model it is asked as.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JudgeCalibrationFile } from '../../src/config/schema.js';
import { answer, type ChatServer, completion, replyIn, startChatServer } from '../helpers/chat-server.js';
import { ROOT } from '../helpers/demo-repo.js';

const CRITERION = 'The reply tells the customer the refund was issued once';
const dirs: string[] = [];
let chat: ChatServer;
let url = '';

/**
 * The judges, by model name. `agreeing` passes a reply that says "once" (score 0.9), as the human
 * does; `yes-man` passes everything; `flaky` agrees but answers HTTP 500 on orders 3, 8 and 13.
 */
function judge(model: string, reply: string): { status: number; label?: 'pass' | 'fail' } {
  if (model === 'flaky' && /ORD-(3|8|13)\b/.test(reply)) return { status: 500 };
  if (model === 'yes-man') return { status: 200, label: 'pass' };
  return { status: 200, label: reply.includes('once') ? 'pass' : 'fail' };
}

beforeAll(async () => {
  chat = await startChatServer((body, _req, res) => {
    const verdict = judge(body.model as string, replyIn(body));
    if (!verdict.label) return answer(res, verdict.status, '{"error": "boom"}');
    answer(res, verdict.status, completion(JSON.stringify({ label: verdict.label, score: 0.9, quote: '' })));
  });
  url = chat.url;
});

afterAll(async () => {
  await chat.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Runs the bundled command without blocking this process, which serves the judge. */
function stategate(
  cwd: string,
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'stategate.mjs'), ...args], {
      cwd,
      env: { ...process.env, CI: '1' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * A directory with a stategate.yml asking `model`, and 22 labels: even orders say "once" (human
 * pass), odd ones "twice" (human fail). Order 20 says "once" but the human failed it at threshold
 * 0.95: the judge's 0.9 is below it, so the judge fails it too.
 */
function project(model: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'sg-calibrate-'));
  dirs.push(dir);
  writeFileSync(
    join(dir, 'stategate.yml'),
    `version: 1\nagent:\n  command: "true"\ndatabase:\n  url: \${UNSET_DATABASE_URL}\njudge:\n  url: ${url}\n  model: ${model}\n  timeout: 5s\n`,
  );
  const items = Array.from({ length: 22 }, (_, i) => {
    const once = i % 2 === 0;
    const lines = [
      `  - criterion: "${CRITERION}"`,
      `    message: "Please refund ORD-${i}"`,
      `    reply: "I refunded ORD-${i} ${once ? 'once' : 'twice'}."`,
      `    label: ${once && i !== 20 ? 'pass' : 'fail'}`,
    ];
    if (i === 20) lines.push('    threshold: 0.95');
    return lines.join('\n');
  });
  writeFileSync(join(dir, 'labels.yaml'), `labels:\n${items.join('\n')}\n`);
  return dir;
}

function calibrationFile(path: string) {
  return JudgeCalibrationFile.parse(JSON.parse(readFileSync(path, 'utf8')));
}

describe('stategate judge calibrate', () => {
  it('a judge that agrees on 22 labels is calibrated for its model; exit 0', {
    timeout: 60_000,
  }, async () => {
    const dir = project('agreeing');
    const res = await stategate(dir, ['judge', 'calibrate', 'labels.yaml']);
    expect(res.stderr).toContain('[22/22] judge fail, human fail');
    expect(res.stdout).toContain(`Criterion ${JSON.stringify(CRITERION)} (model agreeing)`);
    expect(res.stdout).toContain('labels 22, judge errors 0 (left out), n 22');
    expect(res.stdout).toContain('agreement 1.000, kappa 1.000');
    // Orders 0..20 even say "once": 11, of which order 20 fails its 0.95 threshold: 10 both pass, 12 both fail.
    expect(res.stdout).toContain(
      '    judge pass          10           0\n    judge fail           0          12',
    );
    expect(res.stdout).toContain('calibrated: yes');
    expect(res.code).toBe(0);
    const file = calibrationFile(join(dir, 'judge-calibration.json'));
    expect(file.criteria).toEqual([
      expect.objectContaining({ criterion: CRITERION, model: 'agreeing', n: 22, kappa: 1, calibrated: true }),
    ]);
  });

  it("a judge that passes everything is not calibrated (kappa 0.076); exit 2; another model's entry is kept", {
    timeout: 60_000,
  }, async () => {
    const dir = project('agreeing');
    expect(
      (await stategate(dir, ['judge', 'calibrate', 'labels.yaml', '--out', 'cal/judge.json'])).code,
    ).toBe(0);
    writeFileSync(
      join(dir, 'stategate.yml'),
      readFileSync(join(dir, 'stategate.yml'), 'utf8').replace('model: agreeing', 'model: yes-man'),
    );
    const res = await stategate(dir, ['judge', 'calibrate', 'labels.yaml', '--out', 'cal/judge.json']);
    // 10 human passes, 12 human fails; the judge passes all but order 20 (its 0.9 is below that label's
    // threshold 0.95): a=10 b=11 c=0 d=1. po = 11/22 = 0.5; pe = (21·10 + 1·12) / 484 = 222/484;
    // kappa = (22·11 − 222) / (484 − 222) = 20/262 = 0.076.
    expect(res.stdout).toContain(
      '    judge pass          10          11\n    judge fail           0           1',
    );
    expect(res.stdout).toContain('agreement 0.500, kappa 0.076');
    expect(res.stdout).toContain('calibrated: no (agreement 0.500 below 0.8; kappa 0.076 below 0.6)');
    expect(res.code).toBe(2);
    const file = calibrationFile(join(dir, 'cal', 'judge.json'));
    expect(file.criteria.map((c) => [c.model, c.calibrated])).toEqual([
      ['agreeing', true],
      ['yes-man', false],
    ]);
  });

  it('judge errors are counted per criterion and left out of n, never a disagreement', {
    timeout: 60_000,
  }, async () => {
    const dir = project('flaky');
    const res = await stategate(dir, ['judge', 'calibrate', 'labels.yaml']);
    expect(res.stderr).toContain('judge error: the judge answered HTTP 500');
    expect(res.stdout).toContain('labels 22, judge errors 3 (left out), n 19');
    // Orders 3, 8 and 13 are out: 8 (a pass) from the 10 both-pass, 3 and 13 (fails) from the 12 both-fail.
    expect(res.stdout).toContain(
      '    judge pass           9           0\n    judge fail           0          10',
    );
    expect(res.stdout).toContain('agreement 1.000');
    expect(res.stdout).toContain(
      'judge errors: the judge answered HTTP 500; the judge answered HTTP 500; the judge answered HTTP 500',
    );
    expect(res.stdout).toContain('calibrated: no (19 labels with a judge verdict, fewer than 20)');
    expect(res.code).toBe(2);
    const [entry] = calibrationFile(join(dir, 'judge-calibration.json')).criteria;
    expect(entry).toMatchObject({ labels: 22, judge_errors: 3, n: 19, calibrated: false });
  });

  it('a broken labels file or a judge that never answers: exit 1, nothing written', {
    timeout: 60_000,
  }, async () => {
    const dir = project('agreeing');
    writeFileSync(
      join(dir, 'bad.yaml'),
      'labels:\n  - criterion: x\n    message: m\n    reply: r\n    label: yes\n',
    );
    const bad = await stategate(dir, ['judge', 'calibrate', 'bad.yaml']);
    expect(bad.stderr).toContain("bad.yaml:5:12: labels[0].label: expected one of pass | fail, got 'yes'");
    expect(bad.code).toBe(1);

    writeFileSync(
      join(dir, 'stategate.yml'),
      readFileSync(join(dir, 'stategate.yml'), 'utf8').replace(url, 'http://127.0.0.1:9/v1'),
    );
    const down = await stategate(dir, ['judge', 'calibrate', 'labels.yaml']);
    expect(down.stderr).toMatch(
      /the judge gave no verdict on any label \(the judge is unreachable: .+\); nothing written/,
    );
    expect(down.code).toBe(1);
    expect(() => readFileSync(join(dir, 'judge-calibration.json'))).toThrow(/ENOENT/);
  });
});
