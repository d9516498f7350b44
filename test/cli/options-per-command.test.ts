// An option given to a command it means nothing to is refused, naming the commands it applies to,
// instead of being silently ignored (a `merge --dir` that reads the current directory, a
// `validate --scenario` that checks every scenario anyway).
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stategate } from '../helpers/stategate-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'sg-options-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('options outside their commands', () => {
  it.each([
    [
      ['merge', 'r.json', '--dir', 'x'],
      '--dir applies to run, validate, init and plan, not merge: run it from the directory instead',
    ],
    [
      ['demo', '--dir', 'x'],
      '--dir applies to run, validate, init and plan, not demo: run it from the directory instead',
    ],
    [
      ['judge', 'calibrate', 'l.yaml', '--dir', 'x'],
      '--dir applies to run, validate, init and plan, not judge: run it from the directory instead',
    ],
    [
      ['compare', '--base', 'a', '--head', 'b', '--dir', 'x'],
      '--dir applies to run, validate, init and plan, not compare: name the sides with --base and --head',
    ],
    [['run', '--lang', 'python'], '--lang applies to init, not run'],
    [['init', '--scenario', 'x'], '--scenario applies to run, compare and plan, not init'],
    [
      ['merge', 'r.json', '--database-url', 'postgres://x'],
      '--database-url applies to run, compare, validate and demo, not merge',
    ],
  ])('stategate %j', (args, message) => {
    const res = stategate(dir, args);
    expect(res.stderr).toBe(`stategate: ${message}\n`);
    expect(res.code).toBe(1);
    // Refused before anything ran or was written.
    expect(readdirSync(dir)).toEqual([]);
  });
});
