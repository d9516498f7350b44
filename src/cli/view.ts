// `stategate view [DIR]`: opens DIR/report.html (default .stategate) in the desktop's browser when
// there is a display to open it on, and prints its path either way, so it works over SSH and in CI.
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The command that opens a file in the desktop's browser, or null when there is no desktop. */
export function opener(
  platform: NodeJS.Platform,
  env: NodeJS.ProcessEnv,
): { command: string; args: (file: string) => string[] } | null {
  if (platform === 'darwin') return { command: 'open', args: (f) => [f] };
  // `start` is a cmd built-in; its first quoted argument is the window title.
  if (platform === 'win32') return { command: 'cmd', args: (f) => ['/c', 'start', '""', f] };
  if (!env.DISPLAY && !env.WAYLAND_DISPLAY) return null;
  return { command: 'xdg-open', args: (f) => [f] };
}

/** The report.html of a path: the file itself, or report.html inside a directory. */
export function reportHtmlPath(target: string): string {
  const path = resolve(target);
  return existsSync(path) && statSync(path).isDirectory() ? join(path, 'report.html') : path;
}

/** Runs `stategate view [DIR]`; resolves to the exit code. */
export async function commandView(rest: string[]): Promise<number> {
  if (rest.length > 1) {
    process.stderr.write('stategate: view takes at most one directory\n');
    return 1;
  }
  const file = reportHtmlPath(rest[0] ?? '.stategate');
  if (!existsSync(file)) {
    process.stderr.write(
      `stategate: no report at ${file}: compare, run and demo write report.html into their --out directory (default .stategate)\n`,
    );
    return 1;
  }
  process.stdout.write(`${pathToFileURL(file).href}\n`);
  const open = opener(process.platform, process.env);
  if (!open) {
    process.stdout.write('No display to open a browser on: open the file above in one.\n');
    return 0;
  }
  const opened = await new Promise<boolean>((done) => {
    const child = spawn(open.command, open.args(file), { stdio: 'ignore', detached: true });
    child.once('error', () => done(false));
    child.once('spawn', () => {
      child.unref();
      done(true);
    });
  });
  if (!opened) process.stdout.write(`Could not start ${open.command}: open the file above in a browser.\n`);
  return 0;
}
