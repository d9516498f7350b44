// The JSON Schemas users point their editors at, generated from the zod schemas (the source of
// truth). scripts/gen-schema.ts writes them to schema/; a test checks the committed files match.
import { z } from 'zod';
import { AgentResultSchema } from '../model/agent-result.js';
import { LabelsFile, ScenarioFile, StategateConfig, TwinFile } from './schema.js';

const SCHEMAS = [
  { file: 'stategate.schema.json', schema: StategateConfig, title: 'stategate.yml' },
  { file: 'scenario.schema.json', schema: ScenarioFile, title: 'Stategate scenario file' },
  { file: 'twin.schema.json', schema: TwinFile, title: 'Stategate twin file' },
  { file: 'labels.schema.json', schema: LabelsFile, title: 'Stategate judge labels file' },
  // Not a file a person writes: the line (or response body) an agent gives back, for agent authors.
  { file: 'agent-result.schema.json', schema: AgentResultSchema, title: 'Stategate agent result' },
] as const;

/** Each JSON Schema file's name and its text, as written to schema/. */
export function jsonSchemaFiles(): { file: string; text: string }[] {
  return SCHEMAS.map(({ file, schema, title }) => {
    // `input`: what a person writes (defaults optional, before transforms), not what the loader returns.
    const generated = z.toJSONSchema(schema, { io: 'input', target: 'draft-2020-12' });
    const { $schema, ...rest } = generated;
    return { file, text: `${JSON.stringify({ $schema, title, ...rest }, null, 2)}\n` };
  });
}
