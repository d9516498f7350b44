// The evidence of one case in markdown: the reply of a failing representative repeat, the folded
// step-by-step table of the calls (a conversation's turns between them), and the stderr of an
// agent that crashed or printed no result.
import type { CaseReport } from '../model/report.js';
import { mdBlock } from './escape.js';
import { failingReplies, stderrTitle, stepHeader, stepRows, stepsCutWords, stepsSource } from './format.js';
import { table } from './markdown-table.js';
import { mdCellCode, mdText } from './markdown-text.js';
import { hasTurns } from './step-rows.js';

/** `**Reply, head repeat 1 (failed) replied, claiming SUCCESS:** ...`, one line per failing side. */
export function replyLines(steps: NonNullable<CaseReport['steps']>): string[] {
  return failingReplies(steps).map(
    (r) => `**Reply, ${mdText(r.title)}:** ${r.reply.trim() === '' ? '(empty)' : mdText(r.reply)}`,
  );
}

/** The step-by-step table of a case's representative episodes, folded. */
export function stepsDetail(steps: NonNullable<CaseReport['steps']>): string {
  const { rows, divergent, turns } = stepRows(steps);
  const source = [steps.base ? stepsSource('base', steps.base) : '', stepsSource('head', steps.head)]
    .filter(Boolean)
    .join(' beside ');
  // A call shows as code; a turn's text, like what a call got, as escaped text.
  const cells = rows.map(([n, ...rest], r) => [
    Number(n) === divergent ? `**${n}**` : n,
    ...rest.map((cell, i) =>
      i % 2 === 0 && cell !== '' && !turns[r][i / 2] ? mdCellCode(cell) : mdText(cell),
    ),
  ]);
  const cut = stepsCutWords(steps);
  const where = divergent > 0 ? ` The first step that differs is in bold.` : '';
  const body =
    rows.length === 0
      ? 'No tool was called.'
      : `${table(stepHeader(steps), cells)}${cut ? `\n\n${mdText(cut)}` : ''}`;
  const between = hasTurns(steps) ? ", between the conversation's turns" : '';
  const intro = mdText(`Calls as the tools recorded them${between}.${where}`);
  return `<details><summary>Steps: ${mdText(source)}</summary>\n\n${intro}\n\n${body}\n\n</details>`;
}

/** How each side's agent ended when it crashed or printed no result, with its last stderr lines. */
export function stderrDetail(c: CaseReport): string[] {
  const out: string[] = [];
  for (const side of ['base', 'head'] as const) {
    const e = c.agent_stderr?.[side];
    if (!e) continue;
    const title = `**Agent ${side}:** ${mdText(stderrTitle(side, e))}${e.tail === '' ? '.' : ':'}`;
    out.push(e.tail === '' ? title : `${title}\n\n${mdBlock(e.tail)}`);
  }
  return out;
}
