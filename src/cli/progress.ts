// Progress for long runs: a live line on a terminal; in CI logs and pipes, one line per episode as it
// finishes, so the counter shows every number from 1 to the total, in order.
import type { ProgressEvent } from '../run/api.js';

type EpisodeEvent = Extract<ProgressEvent, { type: 'episode' }>;

function resultOf(event: EpisodeEvent): string {
  return event.passed === null ? 'not graded' : event.passed ? 'pass' : 'fail';
}

export function createProgress(stream: NodeJS.WriteStream = process.stderr): (event: ProgressEvent) => void {
  const live = Boolean(stream.isTTY) && !process.env.CI;
  let pending = false;
  const clear = () => {
    if (live && pending) {
      stream.write('\r\x1b[2K');
      pending = false;
    }
  };
  return (event) => {
    if (event.type === 'phase' || event.type === 'log') {
      clear();
      const prefix = event.type === 'log' && event.level === 'warn' ? 'warning: ' : '';
      stream.write(`${prefix}${event.message}\n`);
      return;
    }
    const { done, total, scenario, side } = event;
    if (live) {
      stream.write(`\r\x1b[2K  episodes ${done}/${total}  (${side} ${scenario})`);
      pending = true;
      if (done === total) clear();
      return;
    }
    stream.write(`  episodes ${done}/${total}  ${side} ${scenario}: ${resultOf(event)}\n`);
  };
}
