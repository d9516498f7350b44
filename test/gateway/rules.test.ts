// The pure parts of the gateway: canonical arguments, placeholders, fault rule matching and draws,
// argument messages, SQL truthiness and error mapping, and how broken bodies are shaped.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { argumentCheck } from '../../src/gateway/arguments.js';
import { fillPlaceholders, includesArgs } from '../../src/gateway/canonical.js';
import {
  faultDelayMs,
  faultDraw,
  faultError,
  pickFault,
  retryAfterSeconds,
} from '../../src/gateway/faults.js';
import { shapeWire } from '../../src/gateway/http-json.js';
import { sqlErrorAnswer, truthy } from '../../src/gateway/run-tool.js';
import { canonicalize, canonicalJson } from '../../src/model/canonical-json.js';
import { rule, tool } from './fixture.js';

describe('canonical arguments', () => {
  it('sorts keys recursively and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[{"y":2,"z":1}]},"b":1}',
    );
    expect(canonicalize([3, 1])).toEqual([3, 1]);
  });

  it('gives the same text for any key order of the same value', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (obj) => {
        const reversed = Object.fromEntries(Object.entries(obj).reverse());
        expect(canonicalJson(reversed)).toBe(canonicalJson(obj));
        expect(JSON.parse(canonicalJson(obj))).toEqual(JSON.parse(JSON.stringify(obj)));
      }),
    );
  });

  it('matches argument subsets by canonical value', () => {
    expect(includesArgs({ a: { x: 1, y: 2 }, b: 3 }, { a: { y: 2, x: 1 } })).toBe(true);
    expect(includesArgs({ a: 1 }, { a: '1' })).toBe(false);
    expect(includesArgs({ a: 1 }, { b: 1 })).toBe(false);
    expect(includesArgs(null, { a: 1 })).toBe(false);
  });

  it('fills {arg} placeholders and leaves unknown ones as written', () => {
    expect(fillPlaceholders('refund:{order_id}:{amount}', { order_id: 'ORD-1', amount: 40 })).toBe(
      'refund:ORD-1:40',
    );
    expect(fillPlaceholders('x:{missing}', {})).toBe('x:{missing}');
    expect(fillPlaceholders('{o}', { o: { b: 1, a: 2 } })).toBe('{"a":2,"b":1}');
  });
});

describe('fault rules', () => {
  const ctx = (callNumber: number, args: unknown = {}) => ({ tool: 'pay', callNumber, args, seed: 1 });

  it('`call`, `calls`, `first` and `every` select call numbers of the tool', () => {
    const fires = (when: Record<string, unknown>) =>
      [1, 2, 3, 4, 5].filter((n) => pickFault([rule({ tool: 'pay', when, fault: 'server_error' })], ctx(n)));
    expect(fires({ call: 2 })).toEqual([2]);
    expect(fires({ calls: [1, 4] })).toEqual([1, 4]);
    expect(fires({ first: 3 })).toEqual([1, 2, 3]);
    expect(fires({ every: true })).toEqual([1, 2, 3, 4, 5]);
    // A rule without `when` fires on every call; conditions together must all hold.
    expect([1, 2, 3].filter((n) => pickFault([rule({ tool: 'pay', fault: 'delay' })], ctx(n)))).toEqual([
      1, 2, 3,
    ]);
    expect(fires({ first: 3, calls: [2, 3, 4] })).toEqual([2, 3]);
  });

  it('matches only its own tool, and the first matching rule wins', () => {
    const rules = [
      rule({ tool: 'other', fault: 'auth_denied' }),
      rule({ tool: 'pay', when: { args: { amount: 40 } }, fault: 'timeout_after_mutation' }),
      rule({ tool: 'pay', fault: 'server_error' }),
    ];
    expect(pickFault(rules, ctx(1, { amount: 40, order_id: 'x' }))?.rule.fault).toBe(
      'timeout_after_mutation',
    );
    expect(pickFault(rules, ctx(1, { amount: 41 }))).toMatchObject({
      index: 2,
      rule: { fault: 'server_error' },
    });
    expect(pickFault(rules, { ...ctx(1), tool: 'nothing' })).toBeUndefined();
  });

  it('draws from (seed, rule index, tool, call number) only, uniformly in [0, 1)', () => {
    expect(faultDraw(1, 0, 'pay', 1)).toBe(faultDraw(1, 0, 'pay', 1));
    const draws = Array.from({ length: 4000 }, (_, n) => faultDraw(9, 0, 'pay', n + 1));
    expect(draws.every((d) => d >= 0 && d < 1)).toBe(true);
    const share = draws.filter((d) => d < 0.25).length / draws.length;
    expect(share).toBeGreaterThan(0.2);
    expect(share).toBeLessThan(0.3);
    expect(faultDraw(1, 0, 'pay', 1)).not.toBe(faultDraw(2, 0, 'pay', 1));
    expect(faultDraw(1, 0, 'pay', 1)).not.toBe(faultDraw(1, 1, 'pay', 1));
    expect(faultDraw(1, 0, 'pay', 1)).not.toBe(faultDraw(1, 0, 'refund', 1));
  });

  it('probability 0 never fires, 1 always does, and the same seed fires the same calls', () => {
    const at = (p: number, seed: number) =>
      Array.from({ length: 50 }, (_, n) =>
        pickFault([rule({ tool: 'pay', when: { probability: p }, fault: 'server_error' })], {
          ...ctx(n + 1),
          seed,
        })
          ? 1
          : 0,
      ).join('');
    expect(at(0, 3)).toBe('0'.repeat(50));
    expect(at(1, 3)).toBe('1'.repeat(50));
    expect(at(0.5, 3)).toBe(at(0.5, 3));
    expect(at(0.5, 3)).not.toBe(at(0.5, 4));
  });

  it('gives error faults their status and code, the rule message, Retry-After and delays', () => {
    expect(faultError(rule({ tool: 't', fault: 'unavailable' }))).toEqual({
      status: 503,
      code: 'UNAVAILABLE',
      message: 'The tool is temporarily unavailable.',
    });
    expect(faultError(rule({ tool: 't', fault: 'auth_denied', message: 'Key revoked.' })).message).toBe(
      'Key revoked.',
    );
    expect(() => faultError(rule({ tool: 't', fault: 'delay' }))).toThrow(/no error reply/);
    expect(retryAfterSeconds(rule({ tool: 't', fault: 'rate_limited' }))).toBe(1);
    expect(retryAfterSeconds(rule({ tool: 't', fault: 'unavailable', retry_after: 30 }))).toBe(30);
    expect(retryAfterSeconds(rule({ tool: 't', fault: 'server_error' }))).toBeUndefined();
    expect(faultDelayMs(rule({ tool: 't', fault: 'delay' }))).toBe(1000);
    expect(faultDelayMs(rule({ tool: 't', fault: 'server_error' }))).toBe(0);
    expect(faultDelayMs(rule({ tool: 't', fault: 'timeout_before_mutation', delay_ms: 250 }))).toBe(250);
  });
});

describe('argument checks', () => {
  const pay = tool('pay', {
    input: {
      type: 'object',
      properties: {
        amount: { type: 'number' },
        currency: { enum: ['EUR', 'USD'] },
        email: { type: 'string', format: 'email' },
        items: { type: 'array', items: { type: 'object', properties: { qty: { type: 'integer' } } } },
      },
      required: ['amount'],
    },
    static: {},
  });

  it('names the path of each bad field', () => {
    const check = argumentCheck(pay);
    expect(check({ amount: 1 })).toBeNull();
    expect(check({ amount: '1' })).toBe('/amount must be number');
    expect(check({})).toBe("/ must have required property 'amount'");
    expect(check({ amount: 1, currency: 'GBP' })).toBe(
      '/currency must be equal to one of the allowed values: "EUR", "USD"',
    );
    expect(check({ amount: 1, email: 'nope' })).toBe('/email must match format "email"');
    expect(check({ amount: 1, items: [{ qty: 1 }, { qty: 1.5 }] })).toBe('/items/1/qty must be integer');
    expect(check('x')).toBe('arguments must be a JSON object');
  });

  it('refuses an input that is not a JSON Schema, naming the tool', () => {
    const broken = tool('broken', {
      input: { type: 'object', properties: { a: { type: 'nonsense' } } },
      static: 1,
    });
    expect(() => argumentCheck(broken)).toThrow(
      /tool broken \(twins\/shop\.yaml\): input is not a valid JSON Schema/,
    );
  });
});

describe('SQL answers', () => {
  it('reads a first column as SQL truth whatever the driver returned', () => {
    for (const v of [true, 1, '1', 't', 'true', 'yes', 2.5, '150.00', { a: 1 }]) expect(truthy(v)).toBe(true);
    for (const v of [false, 0, '0', '0.00', 'f', 'false', '', null, undefined]) expect(truthy(v)).toBe(false);
  });

  it('maps integrity errors to 409, data errors to 422, the rest to 500, each a harness error', () => {
    const pgError = (code: string) => Object.assign(new Error(`boom ${code}`), { code });
    expect(sqlErrorAnswer(pgError('23505'))).toEqual({
      ok: false,
      status: 409,
      code: 'CONSTRAINT_VIOLATION',
      message: 'boom 23505',
      harness: true,
      sqlstate: '23505',
    });
    expect(sqlErrorAnswer(pgError('23503'))).toMatchObject({ status: 409 });
    expect(sqlErrorAnswer(pgError('22P02'))).toMatchObject({ status: 422, code: 'INVALID_VALUE' });
    expect(sqlErrorAnswer(pgError('42P01'))).toMatchObject({ status: 500, code: 'TOOL_ERROR' });
    expect(sqlErrorAnswer('not an error')).toMatchObject({ status: 500, message: 'not an error' });
  });
});

describe('broken bodies', () => {
  const body = JSON.stringify({ result: { refund_id: 7, amount: 40 } });
  it('cuts a truncated body in half, mid-JSON', () => {
    const cut = shapeWire(body, 'truncated');
    expect(body.startsWith(cut)).toBe(true);
    expect(cut.length).toBe(Math.floor(body.length / 2));
    expect(() => JSON.parse(cut)).toThrow(SyntaxError);
  });

  it('keeps a malformed body readable but not JSON', () => {
    const bad = shapeWire(body, 'malformed');
    expect(bad).toBe('{"result":{"refund_id":7,"amount":40},}');
    expect(() => JSON.parse(bad)).toThrow(SyntaxError);
    expect(shapeWire(body, 'json')).toBe(body);
  });
});
