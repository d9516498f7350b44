// `stategate view` and report.html from the bundled command, as a user runs them: the demo through
// dist/ writes report.html beside every report.md (the viewer is inside the bundle: no esbuild, no
// node_modules needed to write it), and view prints the page's path, or hands it to the desktop's
// opener when there is a display (a stand-in `xdg-open` on PATH records what it was given).
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { opener } from '../../src/cli/view.js';
import { viewerScript } from '../../src/report/html/viewer-script.js';
import { ROOT } from '../helpers/demo-repo.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const temp = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};

function stategate(cwd: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  const base: NodeJS.ProcessEnv = { ...process.env, CI: '1' };
  delete base.DISPLAY;
  delete base.WAYLAND_DISPLAY;
  const res = spawnSync(process.execPath, [join(ROOT, 'bin', 'stategate.mjs'), ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...base, ...env },
    timeout: 300_000,
  });
  return { code: res.status, stdout: res.stdout, stderr: res.stderr };
}

describe('stategate view', () => {
  let out: string;
  beforeAll(() => {
    out = temp('sg-view-demo-');
    const res = stategate(out, ['demo', '--engine', 'embedded', '--out', out]);
    expect(res.code, res.stderr).toBe(0);
  });

  it('runs the same viewer script the source builds (the bundle carries it; neither bundle loads esbuild)', () => {
    const page = readFileSync(join(out, 'v1.2.4-to-v1.3.0', 'report.html'), 'utf8');
    const script = page.slice(
      page.lastIndexOf('<script>') + '<script>'.length,
      page.lastIndexOf('</script>'),
    );
    expect(script).toBe(viewerScript());
    for (const bundle of ['cli.js', 'action.js']) {
      const text = readFileSync(join(ROOT, 'dist', bundle), 'utf8');
      expect(text).toContain('stategate-data');
      expect(text).not.toMatch(/require\(['"]esbuild['"]\)|from ?['"]esbuild['"]/);
    }
  });

  it('demo writes report.html beside every report.md and names it', () => {
    for (const pair of ['v1.2.4-to-v1.3.0', 'v1.3.0-to-v1.3.1', 'v1.2.4-to-v1.3.1']) {
      const page = join(out, pair, 'report.html');
      expect(existsSync(join(out, pair, 'report.md'))).toBe(true);
      expect(readFileSync(page, 'utf8')).toContain('<script type="application/json" id="stategate-data">');
    }
  });

  it('prints the path where there is no display, and exits 0', () => {
    const dir = join(out, 'v1.2.4-to-v1.3.0');
    const res = stategate(out, ['view', dir]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toBe(
      `${pathToFileURL(join(dir, 'report.html')).href}\nNo display to open a browser on: open the file above in one.\n`,
    );
  });

  it("hands the page to the desktop's opener when there is a display", async () => {
    const bin = temp('sg-view-bin-');
    const seen = join(bin, 'seen');
    writeFileSync(join(bin, 'xdg-open'), `#!/bin/sh\nprintf '%s' "$1" > '${seen}'\n`);
    chmodSync(join(bin, 'xdg-open'), 0o755);
    const dir = join(out, 'v1.3.0-to-v1.3.1');
    const res = stategate(out, ['view', dir], { DISPLAY: ':99', PATH: `${bin}:${process.env.PATH}` });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toBe(`${pathToFileURL(join(dir, 'report.html')).href}\n`);
    for (let i = 0; i < 50 && !existsSync(seen); i++) await new Promise((r) => setTimeout(r, 100));
    expect(readFileSync(seen, 'utf8')).toBe(join(dir, 'report.html'));
  });

  it('fails with where reports are written when there is none, and --help lists it', () => {
    const empty = temp('sg-view-empty-');
    mkdirSync(join(empty, '.stategate'));
    const res = stategate(empty, ['view']);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`no report at ${join(empty, '.stategate', 'report.html')}`);
    expect(stategate(empty, ['--help']).stdout).toContain('stategate view [DIR]');
  });
});

describe('opener', () => {
  it('is open on macOS, start on Windows, xdg-open with a display, and none without', () => {
    expect(opener('darwin', {})?.command).toBe('open');
    expect(opener('win32', {})?.args('C:\\r.html')).toEqual(['/c', 'start', '""', 'C:\\r.html']);
    expect(opener('linux', { WAYLAND_DISPLAY: 'wayland-0' })?.command).toBe('xdg-open');
    expect(opener('linux', {})).toBeNull();
  });
});
