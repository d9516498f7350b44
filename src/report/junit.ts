// JUnit XML for CI test tabs: one <testcase> per scenario and side (classname stategate.<side>),
// a <failure> when a graded repeat failed, an <error> when the side could not be graded, and a
// <system-err> with the agent's stderr tail when it crashed or printed no result.
import type { Side } from '../model/episode.js';
import type { CaseReport, Report, SideSummary } from '../model/report.js';
import { xmlEscape } from './escape.js';
import { UNCALIBRATED_TAG } from './format.js';

export { xmlEscape };

function attrs(values: Record<string, string | number | undefined>): string {
  return Object.entries(values)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => ` ${k}="${xmlEscape(String(v))}"`)
    .join('');
}

interface CaseTally {
  failure?: { message: string; type: string; body: string };
  error?: { message: string; body: string };
}

function outcomeOf(c: CaseReport, side: Side, s: SideSummary): CaseTally {
  const out: CaseTally = {};
  const ungraded = s.infraErrors ?? 0;
  if (c.class === 'incomplete' && (s.runs === 0 || ungraded > 0)) {
    const message =
      s.runs === 0
        ? `the ${side} has no episodes of this scenario`
        : `${ungraded} of ${s.runs} repeats could not be graded`;
    out.error = { message, body: c.reason ?? message };
  }
  const graded = s.runs - ungraded;
  if (s.passes < graded) {
    const failed = Object.entries(s.expectations).filter(([, e]) => e.fail > 0);
    const lines = failed.map(([id, e]) => {
      const tagText = [
        e.critical ? 'critical' : '',
        e.uncalibrated ? UNCALIBRATED_TAG : '',
        ...Object.keys(e.labels ?? {}),
      ]
        .filter(Boolean)
        .join(', ');
      return `${id}${tagText ? ` (${tagText})` : ''}: failed in ${e.fail} of ${s.runs} repeats${e.example ? `. ${e.example}` : ''}`;
    });
    const firstLabel = failed.map(([, e]) => Object.keys(e.labels ?? {})[0]).find(Boolean);
    out.failure = {
      message: `${graded - s.passes} of ${graded} repeats failed: ${failed.map(([id]) => id).join(', ')}`,
      type: firstLabel ?? 'FAILED',
      body: lines.join('\n'),
    };
  }
  return out;
}

function testcase(
  c: CaseReport,
  side: Side,
  s: SideSummary,
): { xml: string; failed: boolean; errored: boolean } {
  const o = outcomeOf(c, side, s);
  const props: [string, string][] = [
    ['class', c.class],
    ['flaky', String(c.flaky[side])],
    ['passes', `${s.passes}/${s.runs}`],
  ];
  const lines = [
    `    <testcase${attrs({ classname: `stategate.${side}`, name: c.id, file: c.file })}>`,
    '      <properties>',
  ];
  for (const [name, value] of props) lines.push(`        <property${attrs({ name, value })}/>`);
  lines.push('      </properties>');
  if (o.error)
    lines.push(
      `      <error${attrs({ message: o.error.message, type: 'INCOMPLETE_RUN' })}>${xmlEscape(o.error.body)}</error>`,
    );
  if (o.failure)
    lines.push(
      `      <failure${attrs({ message: o.failure.message, type: o.failure.type })}>${xmlEscape(o.failure.body)}</failure>`,
    );
  // How the agent ended when it crashed or printed no result, and its stderr tail: CI tabs show it.
  const stderr = c.agent_stderr?.[side];
  if (stderr) {
    const text = `repeat ${stderr.repeat}: the agent ${stderr.ended}${stderr.tail ? `\n${stderr.tail}` : ''}`;
    lines.push(`      <system-err>${xmlEscape(text)}</system-err>`);
  }
  lines.push('    </testcase>');
  return { xml: lines.join('\n'), failed: Boolean(o.failure), errored: Boolean(o.error) };
}

/** Renders a report as JUnit XML: a test suite per side, a test case per scenario. */
export function renderJunit(report: Report): string {
  const suites: string[] = [];
  let tests = 0;
  let failures = 0;
  let errors = 0;
  for (const side of ['base', 'head'] as Side[]) {
    const cases = [...report.cases]
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .filter((c) => c[side]);
    if (cases.length === 0) continue;
    const made = cases.map((c) => testcase(c, side, c[side]!));
    const f = made.filter((m) => m.failed).length;
    const e = made.filter((m) => m.errored).length;
    tests += made.length;
    failures += f;
    errors += e;
    suites.push(
      [
        `  <testsuite${attrs({ name: `stategate.${side}`, tests: made.length, failures: f, errors: e })}>`,
        ...made.map((m) => m.xml),
        '  </testsuite>',
      ].join('\n'),
    );
  }
  const root = `<testsuites${attrs({ name: 'stategate', tests, failures, errors })}>`;
  return ['<?xml version="1.0" encoding="UTF-8"?>', root, ...suites, '</testsuites>', ''].join('\n');
}
