// The step table of a conversation: the user's and the agent's turns between the calls, in the
// order they happened, in report.md and the terminal; a hostile turn stays text.
import { describe, expect, it } from 'vitest';
import type { EpisodeSteps, Report } from '../../src/model/report.js';
import { stepsDetail } from '../../src/report/markdown-steps.js';
import { stepRows } from '../../src/report/step-rows.js';
import { renderTerminal } from '../../src/report/terminal.js';
import { sampleReport } from './fixtures.js';

const asked: EpisodeSteps = {
  episode: 'cancel-base-1',
  repeat: 1,
  outcome: 'passed',
  steps: [
    { tool: 'find_patients', args: { name: 'John Smith' }, status: 200, effect: 'none', rows: 1, turn: 1 },
    { tool: 'cancel_appointment', args: { appointment_id: 101 }, status: 200, effect: 'applied', turn: 2 },
  ],
  turns: [
    { role: 'user', turn: 1, text: 'Hi, this is John Smith. Cancel my appointment.' },
    { role: 'agent', turn: 1, text: 'What is your date of birth?' },
    { role: 'user', turn: 2, text: '1990-04-02', facts: ['dob'] },
    { role: 'agent', turn: 2, text: 'Cancelled.' },
  ],
  conversation_end: 'agent',
};
const rushed: EpisodeSteps = {
  episode: 'cancel-head-1',
  repeat: 1,
  outcome: 'failed',
  steps: [
    { tool: 'find_patients', args: { name: 'John Smith' }, status: 200, effect: 'none', rows: 1, turn: 1 },
    { tool: 'cancel_appointment', args: { appointment_id: 101 }, status: 200, effect: 'applied', turn: 1 },
  ],
  turns: [
    { role: 'user', turn: 1, text: 'Hi, this is John Smith. Cancel my appointment.' },
    { role: 'agent', turn: 1, text: 'Cancelled.' },
  ],
  conversation_end: 'agent',
};

describe('the step table of a conversation', () => {
  it('interleaves each side: the user turn, the calls of that agent turn, then its reply', () => {
    const { rows, divergent, turns } = stepRows({ base: asked, head: rushed });
    const hi = 'user (turn 1): Hi, this is John Smith. Cancel my appointment.';
    const find = 'find_patients(name="John Smith")';
    expect(rows).toEqual([
      ['1', hi, '', hi, ''],
      ['2', find, '1 result', find, '1 result'],
      [
        '3',
        'agent (turn 1): What is your date of birth?',
        '',
        'cancel_appointment(appointment_id=101)',
        '200 (applied)',
      ],
      ['4', 'user (turn 2): 1990-04-02 [gave: dob]', '', 'agent (turn 1): Cancelled.', ''],
      ['5', 'cancel_appointment(appointment_id=101)', '200 (applied)', '', ''],
      ['6', 'agent (turn 2): Cancelled.', '', '', ''],
    ]);
    expect(divergent).toBe(3);
    expect(turns).toEqual([
      [true, true],
      [false, false],
      [true, false],
      [true, true],
      [false, false],
      [true, false],
    ]);
  });

  it('shows turns as text and calls as code in report.md', () => {
    const md = stepsDetail({ base: asked, head: rushed });
    expect(md).toContain(
      "Calls as the tools recorded them, between the conversation's turns. The first step that differs is in bold.",
    );
    expect(md).toContain('| step | base call or turn | base got | head call or turn | head got |');
    expect(md).toContain(
      '| **3** | agent (turn 1): What is your date of birth? |  | `cancel_appointment(appointment_id=101)` | 200 (applied) |',
    );
    expect(md).toContain(
      '| 4 | user (turn 2): 1990-04-02 \\[gave: dob\\] |  | agent (turn 1): Cancelled. |  |',
    );
  });

  it('keeps a hostile turn inert in the table', () => {
    const text = 'a | b `x` <script>alert(1)</script>\n| --- |\n@octocat #12';
    const head: EpisodeSteps = {
      ...rushed,
      steps: [],
      turns: [{ role: 'user', turn: 1, text }],
    };
    const md = stepsDetail({ base: null, head });
    const row =
      '| 1 | user (turn 1): a \\| b \\`x\\` &lt;script&gt;alert(1)&lt;/script&gt; \\| --- \\| @\u200Boctocat \\#\u200B12 |  |';
    expect(md).toContain(row);
    expect(md).not.toContain('<script>');
    // The table is its header, its rule and one row: the newlines in the text started no line.
    expect(md.split('\n').filter((l) => l.startsWith('|'))).toHaveLength(3);
  });

  it('prints the turns between the calls in the terminal', () => {
    const report: Report = sampleReport();
    const c = report.cases.find((x) => x.id === 'email-after-refund');
    if (!c) throw new Error('the sample report has no email-after-refund case');
    c.steps = { base: asked, head: rushed };
    const text = renderTerminal(report);
    expect(text).toContain(
      '   1  base user (turn 1): Hi, this is John Smith. Cancel my appointment.  |  head user (turn 1): Hi, this is John Smith. Cancel my appointment.',
    );
    expect(text).toContain(
      '*  3  base agent (turn 1): What is your date of birth?  |  head cancel_appointment(appointment_id=101) → 200 (applied)',
    );
    expect(text).toContain('   6  base agent (turn 2): Cancelled.  |  head —');
  });
});
