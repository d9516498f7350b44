// The command-line options of a bench. A bench runs for minutes and may rewrite a section of
// docs/performance.md, so an option it does not know (a typo, --help read as nothing) stops it
// before it starts, and --help prints its usage: the header comment of its file.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

export interface BenchArgs {
  /** The value of --name, or `fallback` when it is not given. */
  arg(name: string, fallback: string): string;
  /** Whether --name was given. */
  flag(name: string): boolean;
}

/** The header comment of a file (its leading `//` lines) without the slashes. */
function usage(file: string): string {
  const lines: string[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.startsWith('//')) break;
    lines.push(line.replace(/^\/\/ ?/, ''));
  }
  return lines.join('\n');
}

/**
 * Reads the bench's options from process.argv: `values` take a value (`--name value`), `flags` do
 * not. `moduleUrl` is the bench's import.meta.url (its usage is read from there).
 */
export function benchArgs(moduleUrl: string, values: string[], flags: string[] = []): BenchArgs {
  const file = fileURLToPath(moduleUrl);
  const options: Record<string, { type: 'string' | 'boolean' }> = { help: { type: 'boolean' } };
  for (const name of values) options[name] = { type: 'string' };
  for (const name of flags) options[name] = { type: 'boolean' };
  let parsed: Record<string, string | boolean | undefined>;
  try {
    parsed = parseArgs({ args: process.argv.slice(2), options, strict: true, allowPositionals: false })
      .values as Record<string, string | boolean | undefined>;
  } catch (err) {
    console.error(`${basename(file)}: ${(err as Error).message}\n\n${usage(file)}`);
    process.exit(2);
  }
  if (parsed.help) {
    console.log(usage(file));
    process.exit(0);
  }
  return {
    arg: (name, fallback) => {
      const value = parsed[name];
      return typeof value === 'string' ? value : fallback;
    },
    flag: (name) => parsed[name] === true,
  };
}
