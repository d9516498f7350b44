// Checks across files: duplicate scenario ids and tool names, and every tool a scenario names must
// exist. They read the raw documents (with type guards) rather than validated data, so a scenario
// with one broken expectation still gets its tool names checked in the same pass.
import { namedTools } from '../expectations/registry.js';
import type { StategateConfig } from './schema.js';
import { didYouMean } from './suggest.js';
import type { Problem } from './suite.js';
import { type FieldPath, locate, problemAt, type YamlSource } from './yaml-source.js';

/** A parsed twin or scenario file: its suite-relative path, its tree and its plain data. */
export interface ParsedFile {
  rel: string;
  source: YamlSource;
  /** The plain data; undefined when the file did not parse. */
  value: unknown;
}

/** A twin file and the tool names it declares. */
export interface TwinNames extends ParsedFile {
  names: string[];
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every cross-file problem: duplicates, unknown tools, tools a scenario does not allow, judge config. */
export function suiteChecks(
  twins: TwinNames[],
  scenarios: ParsedFile[],
  config: StategateConfig | undefined,
  opts: { twinsComplete: boolean },
): Problem[] {
  const problems: Problem[] = [];
  const declared = new Map<string, TwinNames>();
  for (const twin of twins) {
    for (const name of twin.names) {
      const first = declared.get(name);
      if (!first) {
        declared.set(name, twin);
        continue;
      }
      const where = locate(first.source, ['tools', name], { key: true });
      problems.push(
        problemAt(
          twin.source,
          ['tools', name],
          `tool '${name}' is also defined in ${first.source.file}:${where.line}:${where.col}`,
          { key: true },
        ),
      );
    }
  }
  // A twin file that did not parse may declare any tool: reporting "unknown tool" would mislead.
  const toolsKnown = opts.twinsComplete && twins.every((t) => isRecord(t.value) && isRecord(t.value.tools));
  const ids = new Map<string, ParsedFile>();
  for (const scenario of scenarios) {
    if (!isRecord(scenario.value)) continue;
    const id = scenario.value.id;
    if (typeof id === 'string') {
      const first = ids.get(id);
      if (first) {
        const where = locate(first.source, ['id']);
        problems.push(
          problemAt(
            scenario.source,
            ['id'],
            `duplicate scenario id '${id}': also the id of ${first.source.file}:${where.line}:${where.col}`,
          ),
        );
      } else ids.set(id, scenario);
    }
    if (toolsKnown)
      problems.push(...toolReferences(scenario.source, scenario.value, new Set(declared.keys())));
    if (config && !config.judge) problems.push(...judgeWithoutConfig(scenario.source, scenario.value));
    if (config) problems.push(...modelReferences(scenario.source, scenario.value, config));
    if (config && !config.user_simulator)
      problems.push(...simulatorWithoutConfig(scenario.source, scenario.value));
  }
  return problems;
}

/** A model fault must name one of `models`: a fault on a provider the agents never get would never fire. */
function modelReferences(
  source: YamlSource,
  scenario: Record<string, unknown>,
  config: StategateConfig,
): Problem[] {
  if (!Array.isArray(scenario.faults)) return [];
  const known = new Set(Object.keys(config.models ?? {}));
  const problems: Problem[] = [];
  scenario.faults.forEach((rule, i) => {
    if (!isRecord(rule) || typeof rule.model !== 'string' || known.has(rule.model)) return;
    const declared =
      known.size === 0 ? 'stategate.yml declares no models' : `models are ${[...known].join(', ')}`;
    problems.push(
      problemAt(
        source,
        ['faults', i, 'model'],
        `unknown model '${rule.model}'${didYouMean(rule.model, known)} (${declared})`,
      ),
    );
  });
  return problems;
}

/** Problems with the tool names one scenario uses in `tools`, `faults` and `expect`. */
function toolReferences(
  source: YamlSource,
  scenario: Record<string, unknown>,
  known: Set<string>,
): Problem[] {
  const problems: Problem[] = [];
  const unknown = (name: unknown, at: FieldPath) => {
    if (typeof name !== 'string' || known.has(name)) return false;
    problems.push(problemAt(source, at, `unknown tool '${name}'${didYouMean(name, known)}`));
    return true;
  };
  const allowed = Array.isArray(scenario.tools)
    ? scenario.tools.filter((t) => typeof t === 'string')
    : undefined;
  if (Array.isArray(scenario.tools)) {
    scenario.tools.forEach((t, i) => {
      unknown(t, ['tools', i]);
    });
  }

  if (Array.isArray(scenario.faults)) {
    scenario.faults.forEach((rule, i) => {
      // A model's fault names no tool (modelReferences checks its name).
      if (!isRecord(rule) || ('model' in rule && !('tool' in rule))) return;
      const at: FieldPath = ['faults', i, 'tool'];
      if (unknown(rule.tool, at) || typeof rule.tool !== 'string') return;
      if (allowed && !allowed.includes(rule.tool)) {
        problems.push(
          problemAt(
            source,
            at,
            `a fault on tool '${rule.tool}', which this scenario's tools list does not allow (${allowed.join(', ')})`,
          ),
        );
      }
    });
  }
  if (Array.isArray(scenario.expect)) {
    scenario.expect.forEach((e, i) => {
      if (!isRecord(e)) return;
      const at: FieldPath = ['expect', i];
      for (const { name, at: inside } of namedTools(e)) unknown(name, [...at, ...inside]);
    });
  }
  return problems;
}

function judgeWithoutConfig(source: YamlSource, scenario: Record<string, unknown>): Problem[] {
  if (!Array.isArray(scenario.expect)) return [];
  return scenario.expect.flatMap((e, i) =>
    isRecord(e) && 'judge' in e
      ? [
          problemAt(
            source,
            ['expect', i, 'judge'],
            'a judge expectation needs a judge in stategate.yml (judge: { url, model })',
            { key: true },
          ),
        ]
      : [],
  );
}

/** A model-played user needs someone to play it: user_simulator in stategate.yml. */
function simulatorWithoutConfig(source: YamlSource, scenario: Record<string, unknown>): Problem[] {
  const user = scenario.user;
  if (!isRecord(user) || user.model !== true) return [];
  return [
    problemAt(
      source,
      ['user', 'model'],
      'a model-played user (user.model: true) needs user_simulator in stategate.yml (user_simulator: { model: PROVIDER/MODEL }, PROVIDER one of models)',
      { key: true },
    ),
  ];
}
