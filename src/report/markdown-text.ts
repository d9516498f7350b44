// Markdown escaping lives in escape.ts, the one escaper; this name stays for the modules that import it.
export { mdCell, mdCellCode, mdCode, mdText } from './escape.js';
