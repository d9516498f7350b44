// Inputs as the runner hands them over (strings, defaults already filled in), parsed and checked.
import { describe, expect, it } from 'vitest';
import { InputError, parseInputs } from '../../src/action/inputs.js';

const defaults: Record<string, string> = {
  config: 'stategate.yml',
  repeats: '',
  'fail-on': 'block',
  shard: '',
  merge: '',
  comment: 'true',
  cache: 'true',
  'github-token': 'ghs_abc',
  'base-ref': '',
  engine: '',
  junit: '',
  out: '.stategate',
  'head-path': '.',
  'reports-from': 'auto',
};

function parse(overrides: Record<string, string> = {}) {
  const values = { ...defaults, ...overrides };
  return parseInputs((name) => values[name] ?? '');
}

function problems(overrides: Record<string, string>): string[] {
  try {
    parse(overrides);
  } catch (err) {
    expect(err).toBeInstanceOf(InputError);
    return (err as InputError).problems;
  }
  throw new Error('expected an InputError');
}

describe('parseInputs', () => {
  it('reads the defaults of action.yml', () => {
    expect(parse()).toEqual({
      config: 'stategate.yml',
      repeats: null,
      failOn: 'block',
      shard: null,
      merge: null,
      comment: true,
      cache: true,
      token: 'ghs_abc',
      baseRef: null,
      engine: null,
      policyFrom: 'base',
      isolation: null,
      sudo: 'auto',
      installBubblewrap: true,
      junit: null,
      out: '.stategate',
      headPath: '.',
      reportsFrom: 'auto',
    });
  });

  it('reads every input', () => {
    expect(
      parse({
        repeats: '3',
        'fail-on': 'warn',
        shard: '2/4',
        comment: 'false',
        cache: 'false',
        'base-ref': 'main',
        engine: 'postgres',
        isolation: 'container',
        sudo: 'never',
        'install-bubblewrap': 'false',
        junit: 'junit.xml',
        out: 'out',
      }),
    ).toMatchObject({
      repeats: 3,
      failOn: 'warn',
      shard: { index: 2, total: 4 },
      comment: false,
      cache: false,
      baseRef: 'main',
      engine: 'postgres',
      isolation: 'container',
      sudo: 'never',
      installBubblewrap: false,
      junit: 'junit.xml',
      out: 'out',
    });
  });

  it('names each malformed input and reports them all at once', () => {
    expect(
      problems({ repeats: 'five', 'fail-on': 'always', shard: '5/4', comment: 'yes', engine: 'docker' }),
    ).toEqual([
      'repeats: expected a whole number from 1 to 1000, got "five"',
      'fail-on: expected block, warn or never, got "always"',
      'shard: expected I/N with 1 <= I <= N (e.g. 2/4), got "5/4"',
      'comment: expected true or false, got "yes"',
      'engine: expected auto, embedded, postgres or testcontainers, got "docker"',
    ]);
    expect(problems({ cache: 'off' })).toEqual(['cache: expected true or false, got "off"']);
    expect(problems({ 'policy-from': 'pr' })).toEqual(['policy-from: expected base or head, got "pr"']);
    expect(parse({ 'policy-from': 'head' }).policyFrom).toBe('head');
    expect(problems({ 'head-path': '../elsewhere', 'reports-from': 'trusted' })).toEqual([
      `head-path: expected a directory inside the workspace (relative, no '..'), got "../elsewhere"`,
      'reports-from: expected auto or untrusted, got "trusted" (a run the base repository does not control cannot be declared trusted)',
    ]);
    expect(problems({ 'head-path': '/tmp/head' })).toHaveLength(1);
    expect(parse({ 'head-path': 'head', 'reports-from': 'untrusted' })).toMatchObject({
      headPath: 'head',
      reportsFrom: 'untrusted',
    });
    expect(problems({ shard: '0/4' })).toHaveLength(1);
    expect(problems({ repeats: '0' })).toHaveLength(1);
    expect(problems({ isolation: 'vm' })).toEqual([
      'isolation: expected process, container or none, got "vm"',
    ]);
    expect(problems({ sudo: 'always' })).toEqual(['sudo: expected auto or never, got "always"']);
    expect(problems({ 'install-bubblewrap': 'auto' })).toEqual([
      'install-bubblewrap: expected true or false, got "auto"',
    ]);
  });

  it('rejects inputs that contradict merge', () => {
    expect(problems({ merge: 'reports/*.json', shard: '1/2' })).toEqual([
      'shard and merge contradict each other: a job either runs a slice or joins them',
    ]);
    expect(
      problems({ merge: 'reports/*.json', repeats: '5', engine: 'embedded', 'base-ref': 'main' }),
    ).toHaveLength(3);
    expect(parse({ merge: 'reports/*.json' }).merge).toBe('reports/*.json');
    expect(problems({ merge: 'reports/*.json', 'policy-from': 'head' })).toEqual([
      'policy-from has no effect with merge: set it on the shard jobs',
    ]);
  });
});
