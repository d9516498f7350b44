// The stategate command: parses arguments and dispatches to the subcommands.
import { parseArgs } from 'node:util';
import { MIN_AGREEMENT, MIN_CALIBRATION_LABELS, MIN_KAPPA } from '../judge/agreement.js';
import { VERSION } from '../version.js';
import { commandCompare, commandDemo, commandMerge, commandRun, commandValidate } from './commands.js';
import { commandInit } from './init.js';
import { commandJudge } from './judge.js';
import { commandPlan } from './plan.js';
import { commandView } from './view.js';

export { VERSION };

export const HELP = `stategate ${VERSION}: a release gate for AI agents that act

Usage:
  stategate compare --base REF|DIR --head REF|DIR [options]
      Run base and head as a pinned pair on the same scenarios, classify every case and gate.
  stategate run [--dir DIR] [--scenario ID]... [--tag TAG]... [options]
      Grade one version of the agent (default: the current directory); each case is labelled pass
      or fail.
  stategate plan [--base REF|DIR --head REF|DIR | --dir DIR] [--cache DIR] [--json] [options]
      Estimate, before running, the episodes a compare (or, with --dir, a run) would take per side
      (min and max for adaptive repeats, and a scenario that never fails) and their model spend,
      measured from the baseline cache's entry for the base when --cache has one, else unknown;
      compared to budget.run_usd. Checks out and loads the suites; starts no engine and no agent.
  stategate validate [--dir DIR] [--config FILE]
      Check the suite of DIR (default: the current directory): every file (schemas, SQL prepared against the template, tool and fault names) and
      report all problems at once: the SQL of the files that load is prepared even when other
      files have problems.
  stategate merge REPORT.json... [--config FILE] [--unverified] [--out DIR] [--fail-on LEVEL]
      Join shard reports (refuses different pinned suites or overlapping slices), then gate. Every
      report is validated (schema, sizes, ids, paths inside the workspace) and each case's class
      recomputed from its counts (a contradiction is refused, exit 1); the verdict comes from the
      gate of --config in the current directory (default stategate.yml; the built-in policy when
      there is none), never from the reports. --unverified marks the result as coming from a run
      this repository does not control (a fork's artifact).
  stategate init [--lang python|typescript] [DIR]
      Write a working suite into DIR (default: the current directory), the root of the repository:
      stategate.yml, db/schema.sql and db/fixtures.yaml, twins/orders.yaml, two scenarios (one with
      a fault), an agent in the language (default python) that passes them, and
      .github/workflows/stategate.yml. Refuses, writing nothing, when any of these files exists.
  stategate demo [--engine ENGINE] [--flaky]
      Compare the three versions of the example refund agent: v1.2.4 -> v1.3.0 -> v1.3.1.
      --flaky grades the seeded-random flaky agent instead, and explains where its repeats fork.
  stategate view [DIR]
      Open DIR/report.html (default .stategate; or the path of an html file) in the desktop's
      browser, and print its path (only the path where there is no display).
  stategate judge calibrate LABELS.yaml [--config FILE] [--out FILE]
      Ask the judge of stategate.yml about every human-labelled reply; print agreement, Cohen's
      kappa and the 2x2 table per criterion; write the calibration file (default
      judge-calibration.json beside stategate.yml). Until a criterion has >= ${MIN_CALIBRATION_LABELS} labels, >= ${MIN_AGREEMENT * 100}%
      agreement and kappa >= ${MIN_KAPPA} for the judge's model, its failures warn instead of blocking.
      Exit 0 every criterion calibrated, 2 some not.

Options:
  --config FILE         stategate.yml, relative to each side's checkout (default stategate.yml);
                        for merge, the one whose gate decides, relative to the current directory
  --repeats N           exactly N episodes per scenario and side (overrides the config's repeats;
                        without either, adaptive 7 to 32 per side)
  --concurrency N       episodes at once (overrides the config)
  --shard I/N           run one deterministic slice of the scenarios
  --scenario ID         run, compare and plan: grade only the scenarios whose id matches (repeatable;
                        * and ? are globs, e.g. 'refund-*'). A filtered run says so in its report
                        and its verdict is WARN at best, never PASS: it is not the whole suite
  --tag TAG             run, compare and plan: grade only the scenarios with this tag (repeatable; with
                        --scenario, a scenario must match both). A pattern or tag that selects
                        nothing is an error that lists the suite's ids or tags
  --dir DIR             run, validate, init and plan: the directory of the suite (the repository root)
  --database-url URL    a PostgreSQL server where the harness may CREATE DATABASE (the postgres
                        engine; overrides database.url and $STATEGATE_DATABASE_URL)
  --out DIR             where report.json, report.md, report.html and episodes.jsonl go (default .stategate);
                        for judge calibrate, the calibration file to write
  --fail-on LEVEL       block | warn | never: which verdict makes the exit code 2 (default block)
  --engine ENGINE       auto | embedded | postgres | testcontainers (overrides the config)
  --suite-from SIDE     head | base: which side's scenarios, twins and template both run (default head)
  --policy-from SIDE    base | head: whose stategate.yml gives the gate, the repeats floor and the
                        judge calibration (default base; the head's when the base has no stategate.yml).
                        Every difference from the base's suite is reported; one that weakens it is
                        at least WARN (BLOCK when the base's gate.block lists suite-weakened)
  --isolation MODE      process | container | none: how both sides' agents run (overrides
                        agent.isolation; container needs agent.image or agent.dockerfile and a Docker
                        daemon; none lets the head's agent run where nothing can isolate it)
  --sudo MODE           auto | never: whether the agent's sandbox runs through passwordless sudo as
                        a uid of its own when stategate is not root (default auto; never keeps the
                        harness's uid in a user namespace, weaker; STATEGATE_SUDO=never does the same)
  --cache DIR           compare: reuse the base's episodes stored in DIR by an earlier run with the
                        same key (base git tree, pinned suite, seeds, repeats, engine, stategate
                        version), and store them there after a complete run; only the missing ones
                        run. A base with uncommitted changes is never cached; an entry that cannot
                        be read is a miss (a warning), never a failure. plan: read the measured
                        model cost of the entry a compare would reuse
  --junit FILE          also write JUnit XML, one test case per scenario and side
  --repo DIR            the git repository refs belong to (default: the current directory)
  --unverified          merge: mark the result as coming from a run this repository does not
                        control (a fork's artifact)
  --lang LANG           init: python | typescript, the scaffold agent's language (default python)
  --json                plan: print the estimate as one JSON object (docs/models.md lists its fields)
  --no-color            plain terminal output
  -h, --help            this text
  -v, --version         the version

Exit codes: 0 the gate passed, 2 the gate failed (--fail-on), 1 stategate could not run
(the message says why and where).
`;

export const OPTIONS = {
  base: { type: 'string' },
  head: { type: 'string' },
  dir: { type: 'string' },
  config: { type: 'string' },
  repeats: { type: 'string' },
  concurrency: { type: 'string' },
  shard: { type: 'string' },
  out: { type: 'string' },
  'fail-on': { type: 'string' },
  engine: { type: 'string' },
  'suite-from': { type: 'string' },
  'policy-from': { type: 'string' },
  isolation: { type: 'string' },
  sudo: { type: 'string' },
  cache: { type: 'string' },
  junit: { type: 'string' },
  repo: { type: 'string' },
  lang: { type: 'string' },
  scenario: { type: 'string', multiple: true },
  tag: { type: 'string', multiple: true },
  'database-url': { type: 'string' },
  'no-color': { type: 'boolean' },
  unverified: { type: 'boolean' },
  flaky: { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const;

export type CliValues = ReturnType<typeof parse>['values'];

function parse(argv: string[]) {
  return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
}

/**
 * Options that mean something only to some commands: given to another, they would be silently
 * ignored (a `validate --dir` that checks the current directory), so they are refused instead.
 */
const ONLY_FOR: Partial<Record<keyof CliValues, { commands: string[]; elsewhere?: Record<string, string> }>> =
  {
    dir: {
      commands: ['run', 'validate', 'init', 'plan'],
      elsewhere: { compare: 'name the sides with --base and --head' },
    },
    scenario: { commands: ['run', 'compare', 'plan'] },
    tag: { commands: ['run', 'compare', 'plan'] },
    json: { commands: ['plan'] },
    lang: { commands: ['init'] },
    'database-url': { commands: ['run', 'compare', 'validate', 'demo'] },
  };

/** Why an option given does not apply to `command`, or null. */
function misplacedOption(command: string, values: CliValues): string | null {
  for (const [name, rule] of Object.entries(ONLY_FOR)) {
    if (!rule || values[name as keyof CliValues] === undefined || rule.commands.includes(command)) continue;
    const where = rule.elsewhere?.[command] ?? (name === 'dir' ? 'run it from the directory instead' : '');
    const list =
      rule.commands.length === 1
        ? rule.commands[0]
        : `${rule.commands.slice(0, -1).join(', ')} and ${rule.commands.at(-1)}`;
    return `--${name} applies to ${list}, not ${command}${where ? `: ${where}` : ''}`;
  }
  return null;
}

/** Runs the command line; resolves to the exit code. */
export async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    process.stderr.write(`stategate: ${(err as Error).message}\nRun 'stategate --help' for usage.\n`);
    return 1;
  }
  const { values, positionals } = parsed;
  if (values.version) {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  const [command, ...rest] = positionals;
  if (values.help || !command) {
    process.stdout.write(HELP);
    return values.help ? 0 : 1;
  }
  const misplaced = misplacedOption(command, values);
  if (misplaced) {
    process.stderr.write(`stategate: ${misplaced}\n`);
    return 1;
  }
  switch (command) {
    case 'compare':
      return commandCompare(values);
    case 'run':
      return commandRun(values);
    case 'validate':
      return commandValidate(values);
    case 'plan':
      return commandPlan(values);
    case 'merge':
      return commandMerge(values, rest);
    case 'demo':
      return commandDemo(values);
    case 'init':
      return commandInit({
        lang: values.lang,
        dirs: [...rest, ...(values.dir === undefined ? [] : [values.dir])],
      });
    case 'judge':
      return commandJudge(values, rest);
    case 'view':
      return commandView(rest);
    default:
      process.stderr.write(`stategate: unknown command '${command}'\nRun 'stategate --help' for usage.\n`);
      return 1;
  }
}
