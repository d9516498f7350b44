// Writes schema/*.json from the zod schemas: node --import tsx scripts/gen-schema.ts
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { jsonSchemaFiles } from '../src/config/json-schema.js';

const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'schema');
for (const { file, text } of jsonSchemaFiles()) {
  await writeFile(path.join(dir, file), text);
  process.stdout.write(`wrote schema/${file}\n`);
}
