// `stategate init [--lang python|typescript] [DIR]`: writes a working suite (stategate.yml, a schema
// with fixtures, a twin file, two scenarios, an agent that passes them) and the workflow into DIR,
// the repository's root. It never overwrites: when any of its files exists it names them all and
// writes nothing.
import { lstatSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { parseChoice } from '../config/options.js';
import { VERSION } from '../version.js';
import { PYTHON_AGENT, TYPESCRIPT_AGENT } from './scaffold-agents.js';
import { type ScaffoldFile, suiteFiles } from './scaffold-suite.js';
import { type ScaffoldLang, workflowYaml } from './scaffold-workflow.js';

/** Every file of the scaffold for an agent in `lang`, in the order init prints them. */
export function scaffoldFiles(lang: ScaffoldLang): ScaffoldFile[] {
  const agent =
    lang === 'python'
      ? { path: 'agent/agent.py', text: PYTHON_AGENT, command: 'python3 agent/agent.py' }
      : { path: 'agent/agent.mjs', text: TYPESCRIPT_AGENT, command: 'node agent/agent.mjs' };
  return [
    ...suiteFiles(agent.command),
    { path: agent.path, text: agent.text },
    { path: '.github/workflows/stategate.yml', text: workflowYaml(lang) },
  ];
}

/** True when something (a file, a directory, a dangling link) is at `path`. */
function occupied(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

export interface InitOptions {
  lang?: string;
  /** The positional DIR and --dir, as given; at most one may name a directory. */
  dirs: string[];
}

/** Runs init; resolves to the exit code (0 written, 1 refused or bad options). */
export function commandInit(opts: InitOptions, cwd = process.cwd()): number {
  const err = (message: string) => {
    process.stderr.write(`stategate: init: ${message}\n`);
    return 1;
  };
  let lang: ScaffoldLang;
  try {
    lang = opts.lang === undefined ? 'python' : parseChoice('lang', opts.lang);
  } catch (e) {
    return err(`--lang: ${(e as Error).message}`);
  }
  const named = [...new Set(opts.dirs.map((d) => resolve(cwd, d)))];
  if (named.length > 1) return err(`one directory, got ${opts.dirs.map((d) => `"${d}"`).join(' and ')}`);
  const root = named[0] ?? cwd;
  const files = scaffoldFiles(lang);
  const show = (path: string) => relative(cwd, join(root, path)) || '.';

  const taken = files.filter((f) => occupied(join(root, f.path)));
  if (taken.length > 0) {
    return err(
      `${taken.map((f) => show(f.path)).join(', ')} already exist${taken.length === 1 ? 's' : ''}; nothing was written (move ${taken.length === 1 ? 'it' : 'them'} away, or init another directory)`,
    );
  }
  for (const f of files) {
    mkdirSync(dirname(join(root, f.path)), { recursive: true });
    // 'wx': a file that appeared since the check is still never overwritten.
    writeFileSync(join(root, f.path), f.text, { flag: 'wx' });
  }
  process.stdout.write(
    nextSteps(
      files.map((f) => show(f.path)),
      // The directory as the user wrote it, for the `cd` they will type.
      named.length === 1 ? opts.dirs[0] : '',
      lang,
    ),
  );
  return 0;
}

/** What init wrote and the commands that come next. */
function nextSteps(written: string[], dir: string, lang: ScaffoldLang): string {
  const agent = lang === 'python' ? 'agent/agent.py' : 'agent/agent.mjs';
  const cd = dir === '' ? '' : `  cd ${dir}\n`;
  const npx = `npx --yes stategate@${VERSION}`;
  return `Wrote a Stategate suite with a ${lang === 'python' ? 'Python' : 'TypeScript (JavaScript with JSDoc types)'} agent:
${written.map((w) => `  ${w}`).join('\n')}

Next (where stategate is not installed, it is ${npx}):
${cd}  stategate validate                        # every file, the SQL prepared against the template
  stategate run --repeats 2                 # both scenarios pass
  stategate run --scenario refund-happy-path   # one scenario (--tag TAG: the scenarios with a tag)
  git init                                  # unless it is a git repository already
  git add -A && git commit -m "Stategate suite"
Then change ${agent} (drop the idempotency_key, say) and see the gate block it:
  stategate compare --base HEAD --head .    # BLOCK: the timeout case refunds twice
On GitHub, .github/workflows/stategate.yml runs the same comparison on every pull request.
`;
}
