// What the configuration asks of a database engine, shared by the loader, the engines and the report.
import type { Row } from './episode.js';

/** What goes into the template: schema SQL files applied in order, then fixtures. */
export interface TemplateSpec {
  /** Schema files: path (for messages) and SQL text. */
  schema: { file: string; sql: string }[];
  /** Fixtures: SQL text, or rows per table from YAML/JSON. */
  fixtures: ({ file: string; sql: string } | { file: string; rows: Record<string, Row[]> })[];
}

/** The database engines (docs/engines.md): the one list the config, the options and the report read. */
export const ENGINE_NAMES = ['embedded', 'postgres', 'testcontainers'] as const;

export type EngineName = (typeof ENGINE_NAMES)[number];
