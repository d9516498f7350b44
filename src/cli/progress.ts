// Progress for long runs: a live line on a terminal, plain lines (about every 10%) in CI logs.
import type { ProgressEvent } from '../run/api.js';

export function createProgress(stream: NodeJS.WriteStream = process.stderr): (event: ProgressEvent) => void {
  const live = Boolean(stream.isTTY) && !process.env.CI;
  let lastStep = -1;
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
    const step = Math.floor((done / total) * 10);
    if (step !== lastStep || done === total) {
      lastStep = step;
      stream.write(`  episodes ${done}/${total}\n`);
    }
  };
}
