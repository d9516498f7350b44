import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OutputCapture } from '../../src/agent/capture.js';
import { checkAgentResult, readResultLine } from '../../src/agent/result.js';

describe('OutputCapture', () => {
  it('keeps everything under the cap', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary' })), fc.integer({ min: 2, max: 64 }), (chunks, cap) => {
        const total = Buffer.concat(chunks.map((c) => Buffer.from(c)));
        fc.pre(total.length <= cap);
        const capture = new OutputCapture(cap);
        for (const chunk of chunks) capture.push(chunk);
        expect(capture.truncated).toBe(false);
        expect(capture.text()).toBe(total.toString('utf8'));
      }),
    );
  });

  it('over the cap keeps exactly the head and the tail, whatever the chunking', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 50 }), { minLength: 1 }),
        fc.integer({ min: 2, max: 40 }),
        (chunks, cap) => {
          const total = Buffer.concat(chunks);
          fc.pre(total.length > cap);
          const capture = new OutputCapture(cap);
          for (const chunk of chunks) capture.push(Buffer.from(chunk));
          const head = Math.floor(cap / 2);
          const tail = cap - head;
          expect(capture.truncated).toBe(true);
          expect(capture.totalBytes).toBe(total.length);
          const text = capture.text();
          const marker = `\n[... ${total.length - cap} bytes omitted ...]\n`;
          expect(text).toBe(
            total.subarray(0, head).toString('utf8') +
              marker +
              total.subarray(total.length - tail).toString('utf8'),
          );
        },
      ),
    );
  });

  it('finds the last non-empty line and knows when the cap cut into it', () => {
    const whole = new OutputCapture(40);
    whole.push('aaaaaaaaaaaaaaaaaaaaaaaaa\n{"reply":"x"}\n\n');
    expect(whole.lastLine()).toEqual({ line: '{"reply":"x"}', cut: false });
    const cut = new OutputCapture(20);
    cut.push(`a\n${'b'.repeat(30)}\n`);
    expect(cut.lastLine()).toEqual({ line: 'b'.repeat(10), cut: true });
    // The line starts exactly where the kept tail starts: it is whole.
    const edge = new OutputCapture(20);
    edge.push(`${'z'.repeat(20)}\n0123456789`);
    expect(edge.lastLine()).toEqual({ line: '0123456789', cut: false });
    expect(new OutputCapture(20).lastLine()).toBeNull();
  });

  it('refuses a cap it cannot honour', () => {
    expect(() => new OutputCapture(1)).toThrow('maxOutputBytes must be an integer >= 2, got 1');
  });
});

describe('checking the result object', () => {
  it('keeps the known fields of a valid result', () => {
    expect(
      checkAgentResult({
        reply: 'ok',
        outcome: 'ESCALATED',
        usage: { input_tokens: 1 },
        extra: true,
        tool_calls: [],
      }),
    ).toEqual({ result: { reply: 'ok', outcome: 'ESCALATED', usage: { input_tokens: 1 }, tool_calls: [] } });
  });

  it('says what is wrong with an invalid one', () => {
    expect(checkAgentResult(null).resultError).toBe('the result must be a JSON object, got null');
    expect(checkAgentResult({ reply: 3 }).resultError).toBe(
      'the result must have a string "reply", got number',
    );
    expect(checkAgentResult({ reply: '', outcome: null }).resultError).toBe(
      '"outcome" must be one of SUCCESS, FAILURE, PARTIAL, ESCALATED, got null',
    );
    expect(checkAgentResult({ reply: '', tool_calls: {} }).resultError).toBe(
      '"tool_calls" must be a list, got object',
    );
    expect(checkAgentResult({ reply: '', usage: { cost_usd: '0.1' } }).resultError).toBe(
      '"usage.cost_usd" must be a non-negative number, got "0.1"',
    );
  });

  it('reads the result from the last line only', () => {
    const out = new OutputCapture(1024);
    out.push('{"reply":"an earlier line"}\nnot json at all\n');
    expect(readResultLine(out)).toEqual({
      resultError: 'last line of stdout is not JSON: "not json at all"',
    });
  });
});
