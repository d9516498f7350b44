// report.html: one self-contained file. The report's data sits in a JSON block (never executed,
// `<` and line separators escaped so no string can end the block), the script and the style are
// inline and allowed by their hashes alone, and the Content-Security-Policy allows no request of
// any kind: the page opens from disk or an artifact and nothing in it can reach a network.
import { createHash } from 'node:crypto';
import { PAGE_STYLE } from './page-style.js';
import type { ViewerData } from './viewer-data.js';
import { viewerScript } from './viewer-script.js';

/** The JSON text of the data block: `<` (ends or comments the block), U+2028 and U+2029 escaped. */
export function dataBlock(data: ViewerData): string {
  return JSON.stringify(data)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

const hash = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/** The whole page for the report and its episodes. */
export function renderHtml(data: ViewerData): string {
  const script = viewerScript();
  // The bundle is the project's own code; a `</script` in it would end the element early.
  if (/<\/script/i.test(script)) throw new Error('the viewer bundle holds </script');
  const csp = [
    "default-src 'none'",
    `script-src ${hash(script)}`,
    `style-src ${hash(PAGE_STYLE)}`,
    "img-src 'none'",
    "connect-src 'none'",
    "font-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-src 'none'",
  ].join('; ');
  const title = `Stategate ${['PASS', 'WARN', 'BLOCK'].includes(data.report.verdict) ? data.report.verdict : 'report'}`;
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${csp}">`,
    '<meta name="referrer" content="no-referrer">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${title}</title>`,
    `<style>${PAGE_STYLE}</style>`,
    '</head>',
    '<body>',
    '<noscript>This report needs JavaScript; report.json beside it holds the same data.</noscript>',
    '<main id="app"></main>',
    `<script type="application/json" id="stategate-data">${dataBlock(data)}</script>`,
    `<script>${script}</script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}
