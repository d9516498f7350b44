// The page's script (viewer/main.ts bundled for the browser). scripts/build.mjs replaces this module
// in dist/ with the prebuilt bundle as a string, so the action (no node_modules) and the CLI write
// report.html without esbuild; run from source (tests, tsx), it bundles once with esbuild.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

let built: string | undefined;

/** The bundled viewer script. */
export function viewerScript(): string {
  if (built === undefined) {
    const esbuild = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
    const out = esbuild.buildSync({
      entryPoints: [fileURLToPath(new URL('./viewer/main.ts', import.meta.url))],
      ...VIEWER_BUILD,
      write: false,
    });
    built = out.outputFiles[0].text;
    // buildSync leaves esbuild's worker thread and its service process running for the next call:
    // there is none, and a run must leave no process of its own behind.
    void esbuild.stop();
  }
  return built;
}

/** esbuild options for the viewer bundle: the same as scripts/build.mjs uses (a test compares the two bundles). */
export const VIEWER_BUILD = {
  bundle: true,
  format: 'iife',
  platform: 'browser',
  target: 'chrome100',
  minify: true,
  legalComments: 'none',
} as const;
