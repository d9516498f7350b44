// Plays the GitHub Actions runner for one step: `node dist/index.js` with the INPUT_* variables the
// runner derives from action.yml's defaults and the step's `with:`, an event payload file, and the
// GITHUB_OUTPUT / GITHUB_STEP_SUMMARY files; then reads back what a user would see.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

export const PROJECT = fileURLToPath(new URL('../..', import.meta.url));
const ACTION_YML = join(PROJECT, 'action.yml');
export const DIST = join(PROJECT, 'dist', 'index.js');

/** One workflow command the step printed, e.g. `::error file=a.yaml,line=3::message`. */
export interface WorkflowCommand {
  command: string;
  properties: Record<string, string>;
  message: string;
}

export interface StepResult {
  code: number | null;
  stdout: string;
  stderr: string;
  outputs: Record<string, string>;
  summary: string;
  commands: WorkflowCommand[];
}

export interface StepOptions {
  workspace: string;
  /** The step's `with:` values (as the workflow file writes them). */
  with: Record<string, string | number | boolean>;
  /** The step's `env:`. */
  env?: Record<string, string>;
  event: { name: string; payload: unknown };
  repository: string;
  /** GITHUB_SHA: for pull_request, the merge commit the checkout points at. */
  sha: string;
  apiUrl: string;
  token: string;
  /** Where the runner keeps its files for this step. */
  runnerTemp: string;
  /** The action's entry to run; the project's dist/index.js unless given (e.g. a copy of the action). */
  dist?: string;
  /** Who runs the step: argv of `node dist` in, the argv to spawn out (e.g. as another user); as is by default. */
  as?: (argv: string[]) => string[];
}

/**
 * The action as a runner fetches it (the repository's action.yml and dist/, no node_modules), copied
 * into `dir`, which must have no node_modules above it; returns the entry to run.
 */
export function actionCopy(dir: string): string {
  for (let d = dir; ; d = dirname(d)) {
    if (existsSync(join(d, 'node_modules')))
      throw new Error(`${d} has a node_modules the copy could load from`);
    if (dirname(d) === d) break;
  }
  mkdirSync(dir, { recursive: true });
  cpSync(ACTION_YML, join(dir, 'action.yml'));
  cpSync(join(PROJECT, 'dist'), join(dir, 'dist'), { recursive: true });
  const main = (parse(readFileSync(ACTION_YML, 'utf8')) as { runs: { main: string } }).runs.main;
  return join(dir, main);
}

/** The INPUT_* variables of a step: action.yml defaults (expressions evaluated), overridden by `with:`. */
export function inputEnv(values: StepOptions['with'], token: string): Record<string, string> {
  const action = parse(readFileSync(ACTION_YML, 'utf8')) as { inputs: Record<string, { default?: string }> };
  const env: Record<string, string> = {};
  const name = (input: string) => `INPUT_${input.replace(/ /g, '_').toUpperCase()}`;
  for (const [input, spec] of Object.entries(action.inputs)) {
    const value = String(spec.default ?? '').replace(/\$\{\{\s*github\.token\s*\}\}/g, token);
    env[name(input)] = value;
  }
  for (const [input, value] of Object.entries(values)) {
    if (!(input in action.inputs))
      throw new Error(`the step sets input ${input}, which action.yml does not declare`);
    env[name(input)] = String(value);
  }
  return env;
}

/** Runs the action's bundle as the runner does and collects outputs, summary and workflow commands. */
export async function runStep(opts: StepOptions): Promise<StepResult> {
  const dist = opts.dist ?? DIST;
  if (!existsSync(dist)) throw new Error(`${dist} is missing: run npm run build first`);
  const dir = join(opts.runnerTemp, randomUUID());
  mkdirSync(dir, { recursive: true });
  const eventPath = join(dir, 'event.json');
  const outputPath = join(dir, 'output.txt');
  const summaryPath = join(dir, 'summary.md');
  writeFileSync(eventPath, JSON.stringify(opts.event.payload, null, 2));
  writeFileSync(outputPath, '');
  writeFileSync(summaryPath, '');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    LANG: process.env.LANG ?? 'C.UTF-8',
    CI: 'true',
    GITHUB_ACTIONS: 'true',
    GITHUB_EVENT_NAME: opts.event.name,
    GITHUB_EVENT_PATH: eventPath,
    GITHUB_REPOSITORY: opts.repository,
    GITHUB_SHA: opts.sha,
    GITHUB_WORKSPACE: opts.workspace,
    GITHUB_OUTPUT: outputPath,
    GITHUB_STEP_SUMMARY: summaryPath,
    GITHUB_API_URL: opts.apiUrl,
    GITHUB_SERVER_URL: 'https://github.com',
    GITHUB_RUN_ID: '4242',
    RUNNER_TEMP: dir,
    // Folders the test shares with the agents' sandbox (test/helpers/agent-dir.ts), as a workflow's env would.
    ...(process.env.STATEGATE_AGENT_BIND ? { STATEGATE_AGENT_BIND: process.env.STATEGATE_AGENT_BIND } : {}),
    ...inputEnv(opts.with, opts.token),
    ...opts.env,
  };
  const argv = (opts.as ?? ((a: string[]) => a))([process.execPath, dist]);
  const child = spawn(argv[0], argv.slice(1), {
    cwd: opts.workspace,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout += d;
  });
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const code = await new Promise<number | null>((ok) => child.on('close', (c) => ok(c)));
  return {
    code,
    stdout,
    stderr,
    outputs: parseOutputFile(readFileSync(outputPath, 'utf8')),
    summary: readFileSync(summaryPath, 'utf8'),
    commands: parseCommands(stdout),
  };
}

/** Parses $GITHUB_OUTPUT: `name<<DELIMITER` blocks and `name=value` lines. */
export function parseOutputFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const heredoc = /^([^=<]+)<<(.+)$/.exec(lines[i]);
    if (heredoc) {
      const end = lines.indexOf(heredoc[2], i + 1);
      out[heredoc[1]] = lines.slice(i + 1, end).join('\n');
      i = end;
    } else if (lines[i].includes('=')) {
      const at = lines[i].indexOf('=');
      out[lines[i].slice(0, at)] = lines[i].slice(at + 1);
    }
  }
  return out;
}

// The escapes of @actions/core's command encoding.
const decodeCommand = (s: string) =>
  s
    .replace(/%3A/g, ':')
    .replace(/%2C/g, ',')
    .replace(/%0D/g, '\r')
    .replace(/%0A/g, '\n')
    .replace(/%25/g, '%');

/** Parses `::command key=value,key=value::message` lines. */
export function parseCommands(stdout: string): WorkflowCommand[] {
  const out: WorkflowCommand[] = [];
  for (const line of stdout.split(/\r?\n/)) {
    const m = /^::([a-z-]+)(?: ([^:]*))?::(.*)$/.exec(line);
    if (!m) continue;
    const properties: Record<string, string> = {};
    for (const pair of (m[2] ?? '').split(',').filter(Boolean)) {
      const at = pair.indexOf('=');
      properties[pair.slice(0, at)] = decodeCommand(pair.slice(at + 1));
    }
    out.push({ command: m[1], properties, message: decodeCommand(m[3]) });
  }
  return out;
}
