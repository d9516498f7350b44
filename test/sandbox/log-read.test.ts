// The change log's read after a watermark is written into the capture's one query: only the
// server's own count may stand there, never text that could close the statement.
import { describe, expect, it } from 'vitest';
import { readLogAfter } from '../../src/sandbox/capture.js';

describe('readLogAfter', () => {
  it('writes a watermark of digits in place', () => {
    expect(readLogAfter('0')).toMatch(/WHERE id > 0 ORDER BY id$/);
    expect(readLogAfter('9007199254740993')).toMatch(/WHERE id > 9007199254740993 ORDER BY id$/);
  });

  it('refuses anything but digits', () => {
    for (const bad of ['', '1; DROP TABLE orders', '-1', '1.5', '1 OR true', '١٢']) {
      expect(() => readLogAfter(bad)).toThrow(/watermark is not a number/);
    }
  });
});
