// The `user:` block of a conversation scenario as the loader checks it: each problem at its file,
// line and field, with what was expected (must_learn naming no fact, a scripted fact with no
// `asked`, an `asked` pattern RE2 cannot run in linear time, a model-played user with no instructions).
import { describe, expect, it } from 'vitest';
import { readScenario } from '../../src/config/scenario-file.js';
import { parseYaml } from '../../src/config/yaml-source.js';

function problemsOf(text: string) {
  const parsed = parseYaml('scenarios/cancel.yaml', text);
  return readScenario(parsed.value, parsed.source, 'scenarios/cancel.yaml');
}

const HEAD = `id: cancel-same-name
input:
  message: "Hi, this is John Smith. Please cancel my appointment."
`;

describe('a scenario with user:', () => {
  it('loads, with max_turns 10, unknown "I don\'t know." and model false by default', () => {
    const { scenario, problems } = problemsOf(`${HEAD}user:
  facts:
    dob: { value: "1990-04-02", asked: [date of birth, /\\bdob\\b/] }
expect:
  - id: verified
    order: { before: cancel_appointment, must_learn: [dob] }
`);
    expect(problems).toEqual([]);
    expect(scenario?.user).toMatchObject({ max_turns: 10, unknown: "I don't know.", model: false, say: [] });
  });

  it('refuses a must_learn that names no fact, at its line', () => {
    const { problems } = problemsOf(`${HEAD}user:
  facts:
    dob: { value: "1990-04-02", asked: [dob] }
expect:
  - id: verified
    order:
      before: cancel_appointment
      must_learn: [dob, date-of-birth]
`);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ file: 'scenarios/cancel.yaml', line: 11 });
    expect(problems[0].message).toBe(
      "must_learn names fact 'date-of-birth', which user.facts does not have; expected one of: dob",
    );
  });

  it('refuses a must_learn in a scenario without a user', () => {
    const { problems } = problemsOf(`${HEAD}expect:
  - id: verified
    order: { before: cancel_appointment, must_learn: [dob] }
`);
    expect(problems.map((p) => [p.line, p.message])).toEqual([
      [6, "must_learn names fact 'dob', but the scenario has no user: add a user block with facts"],
    ]);
  });

  it('refuses an order with neither must_call nor must_learn', () => {
    const { problems } = problemsOf(`${HEAD}expect:
  - id: verified
    order: { before: cancel_appointment }
`);
    expect(problems.map((p) => p.message).join('\n')).toContain(
      'order needs must_call (tools), must_learn (user facts) or both',
    );
  });

  it('refuses a scripted fact without asked, and an asked pattern with a backreference, at their lines', () => {
    const { problems } = problemsOf(`${HEAD}user:
  facts:
    dob: { value: "1990-04-02" }
    which:
      value: Tuesday
      asked: [which one, "/(a)\\\\1/"]
`);
    expect(problems.map((p) => [p.line, p.message])).toEqual([
      [
        6,
        "fact 'dob' needs 'asked': the phrases that ask for it (the scripted user gives a fact only when asked)",
      ],
      [
        9,
        'not a valid regular expression: backreferences (\\1, \\k<name>) cannot be matched in linear time; expected a regular expression in RE2 syntax (linear-time matching: no backreferences, no lookaround)',
      ],
    ]);
  });

  it('refuses a model-played user without instructions; its facts need no asked', () => {
    const { problems } = problemsOf(`${HEAD}user:
  model: true
  facts:
    dob: { value: "1990-04-02" }
`);
    expect(problems.map((p) => [p.line, p.message])).toEqual([
      [5, "a model-played user (model: true) needs 'instructions': who the user is and what they want"],
    ]);
  });

  it('refuses a reply turn that is not final, any or all', () => {
    const { problems } = problemsOf(`${HEAD}expect:
  - id: polite
    reply_contains: thanks
    turn: last
`);
    expect(problems).toHaveLength(1);
    expect(problems[0].line).toBe(7);
  });
});

describe('a model-played user in a suite', () => {
  it('needs user_simulator in stategate.yml, said at the scenario line of user.model', async () => {
    const { loadSuite } = await import('../../src/config/load.js');
    const { makeSuite, tempRoot, VALID_ENV } = await import('./helpers.js');
    const root = await tempRoot();
    try {
      const dir = await makeSuite(root.dir, {
        'scenarios/talk.yaml': `id: talk-to-a-model
input: { message: "Hi" }
user:
  model: true
  instructions: You want a refund.
  facts: { order: { value: ORD-1 } }
`,
      });
      const result = await loadSuite(`${dir}/stategate.yml`, { env: VALID_ENV });
      expect(result.ok).toBe(false);
      const problems = 'problems' in result ? result.problems : [];
      expect(problems.filter((p) => p.file.endsWith('talk.yaml')).map((p) => [p.line, p.message])).toEqual([
        [
          4,
          'a model-played user (user.model: true) needs user_simulator in stategate.yml (user_simulator: { model: PROVIDER/MODEL }, PROVIDER one of models)',
        ],
      ]);
    } finally {
      await root.remove();
    }
  });
});
