// report.json, and its renderings: markdown (comment, check run, job summary), terminal, JUnit.

export type * from '../model/report.js';
export { renderJunit } from './junit.js';
export {
  COMMENT_MARKER,
  MARKDOWN_LIMITS,
  type MarkdownOptions,
  type MarkdownVariant,
  renderMarkdown,
} from './markdown.js';
export { renderSideTable, renderTerminal, type TerminalOptions } from './terminal.js';
