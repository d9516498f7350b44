import { describe, expect, it } from 'vitest';
import { compareSuite } from '../../src/compare/suite.js';
import { renderJunit, xmlEscape } from '../../src/report/junit.js';
import { repeats, scenario } from '../compare/builders.js';
import { facts, sampleReport } from './fixtures.js';

interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  text: string;
}

/** A strict little XML reader for what JUnit output uses: elements, attributes, text, the five entities. */
function parseXml(xml: string): XmlElement {
  let i = 0;
  const fail = (why: string): never => {
    throw new Error(`${why} at offset ${i}: ${JSON.stringify(xml.slice(i, i + 30))}`);
  };
  const decode = (s: string) => {
    if (/[<]/.test(s)) fail('raw < in text');
    if (/&(?!(amp|lt|gt|quot|apos);)/.test(s)) fail('bad entity');
    return s.replace(
      /&(amp|lt|gt|quot|apos);/g,
      (_, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" })[e]!,
    );
  };
  if (xml.startsWith('<?xml')) i = xml.indexOf('?>') + 2;
  const skipSpace = () => {
    while (/\s/.test(xml[i] ?? '')) i++;
  };
  const element = (): XmlElement => {
    if (xml[i] !== '<') fail('expected <');
    i++;
    const name = /^[A-Za-z_][\w.-]*/.exec(xml.slice(i))?.[0] ?? fail('expected a name');
    i += name.length;
    const attrs: Record<string, string> = {};
    for (;;) {
      skipSpace();
      if (xml.startsWith('/>', i)) {
        i += 2;
        return { name, attrs, children: [], text: '' };
      }
      if (xml[i] === '>') {
        i++;
        break;
      }
      const m = /^([A-Za-z_][\w.-]*)="([^"]*)"/.exec(xml.slice(i)) ?? fail('expected an attribute');
      if (m[1] in attrs) fail(`duplicate attribute ${m[1]}`);
      attrs[m[1]] = decode(m[2]);
      i += m[0].length;
    }
    const children: XmlElement[] = [];
    let text = '';
    for (;;) {
      const next = xml.indexOf('<', i);
      if (next < 0) fail(`unclosed <${name}>`);
      text += decode(xml.slice(i, next));
      i = next;
      if (xml.startsWith('</', i)) {
        const close = `</${name}>`;
        if (!xml.startsWith(close, i)) fail(`expected ${close}`);
        i += close.length;
        return { name, attrs, children, text };
      }
      children.push(element());
    }
  };
  skipSpace();
  const root = element();
  skipSpace();
  if (i !== xml.length) fail('trailing content');
  return root;
}

const all = (e: XmlElement, name: string): XmlElement[] => [
  ...(e.name === name ? [e] : []),
  ...e.children.flatMap((c) => all(c, name)),
];

describe('renderJunit', () => {
  const root = parseXml(renderJunit(sampleReport()));

  it('has one testcase per scenario and side, with the class as a property', () => {
    expect(root.name).toBe('testsuites');
    expect(root.attrs).toMatchObject({ name: 'stategate', tests: '12', failures: '3', errors: '1' });
    expect(root.children.map((s) => s.attrs.name)).toEqual(['stategate.base', 'stategate.head']);
    const cases = all(root, 'testcase');
    expect(cases).toHaveLength(12);
    const head = cases.find(
      (c) => c.attrs.classname === 'stategate.head' && c.attrs.name === 'refund-timeout-after-mutation',
    )!;
    const props = Object.fromEntries(all(head, 'property').map((p) => [p.attrs.name, p.attrs.value]));
    expect(props).toEqual({ class: 'new-critical-failure', flaky: 'true', passes: '3/5' });
  });

  it('fails a side with the failed expectations and their messages', () => {
    const head = all(root, 'testcase').find(
      (c) => c.attrs.classname === 'stategate.head' && c.attrs.name === 'refund-timeout-after-mutation',
    )!;
    const [failure] = all(head, 'failure');
    expect(failure.attrs.message).toBe('2 of 5 repeats failed: refunded-exactly-once, policy-before-refund');
    expect(failure.attrs.type).toBe('STATE_MISMATCH');
    expect(failure.text).toContain(
      'refunded-exactly-once (critical, STATE_MISMATCH): failed in 2 of 5 repeats. expected refund_count = 1, got 2',
    );
    const base = all(root, 'testcase').find(
      (c) => c.attrs.classname === 'stategate.base' && c.attrs.name === 'refund-timeout-after-mutation',
    )!;
    expect(all(base, 'failure')).toHaveLength(0);
  });

  it('errors the side of an incomplete case that could not be graded', () => {
    const head = all(root, 'testcase').find(
      (c) => c.attrs.classname === 'stategate.head' && c.attrs.name === 'judge-politeness',
    )!;
    const [error] = all(head, 'error');
    expect(error.attrs.message).toBe('1 of 5 repeats could not be graded');
    expect(error.text).toBe(
      '1 of 5 head repeats could not be graded (polite: the judge did not answer within 30s).',
    );
  });

  it('escapes markup, quotes and characters XML cannot carry', () => {
    const s = scenario('xml-hostile', [{ id: 'reply', critical: false }]);
    const message = 'got <b>"bold" & \'quoted\'</b>]]> \u0001\u0007 end';
    const report = compareSuite({
      ...facts(),
      cases: [
        {
          scenario: s,
          base: repeats(s, 'base', [{}]),
          head: repeats(s, 'head', [{ verdicts: { reply: 'fail' }, messages: { reply: message } }]),
        },
      ],
    });
    const xml = renderJunit(report);
    expect(xml).not.toContain('<b>');
    const failure = all(parseXml(xml), 'failure')[0];
    expect(failure.text).toBe(
      'reply (STATE_MISMATCH): failed in 1 of 1 repeats. got <b>"bold" & \'quoted\'</b>]]> \uFFFD\uFFFD end',
    );
    expect(xmlEscape('a<b>&"\'')).toBe('a&lt;b&gt;&amp;&quot;&apos;');
  });

  it('leaves out the base suite of a head-only run', () => {
    const s = scenario('fresh', []);
    const report = compareSuite({
      ...facts({ sides: { base: null, head: { ref: 'main', sha: null } } }),
      cases: [{ scenario: s, base: null, head: repeats(s, 'head', [{}]) }],
    });
    const r = parseXml(renderJunit(report));
    expect(r.children.map((c) => c.attrs.name)).toEqual(['stategate.head']);
  });

  it('the checker itself rejects malformed XML', () => {
    expect(() => parseXml('<a><b></a>')).toThrow('expected </b>');
    expect(() => parseXml('<a x="1 & 2"/>')).toThrow('bad entity');
  });
});
