// The JSON Schemas in schema/ are generated from the zod schemas: the committed files must equal a
// fresh generation, and an editor using them must accept the valid suite and flag broken files.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { jsonSchemaFiles } from '../../src/config/json-schema.js';
import { CORPUS_DIR, VALID_DIR } from './helpers.js';

const SCHEMA_DIR = fileURLToPath(new URL('../../schema/', import.meta.url));
const committed = (file: string) => readFileSync(path.join(SCHEMA_DIR, file), 'utf8');

function validator(file: string) {
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  return ajv.compile(JSON.parse(committed(file)));
}
const yamlAt = (dir: string, rel: string) => parse(readFileSync(path.join(dir, rel), 'utf8'));

describe('schema/*.json', () => {
  it('equals a fresh generation from the zod schemas (run: node --import tsx scripts/gen-schema.ts)', () => {
    const fresh = jsonSchemaFiles();
    expect(fresh.map((f) => f.file)).toEqual([
      'stategate.schema.json',
      'scenario.schema.json',
      'twin.schema.json',
      'labels.schema.json',
      'agent-result.schema.json',
    ]);
    for (const { file, text } of fresh) expect(committed(file), file).toBe(text);
  });

  it('accepts every file of the valid suite', () => {
    const config = validator('stategate.schema.json');
    const scenario = validator('scenario.schema.json');
    const twin = validator('twin.schema.json');
    // The editor sees the file before variables expand: give the plain values.
    const raw = yamlAt(VALID_DIR, 'stategate.yml');
    const cfg = { ...raw, repeats: 3, database: { ...raw.database, engine: 'postgres' } };
    expect(config(cfg), JSON.stringify(config.errors)).toBe(true);
    for (const rel of ['scenarios/refunds/simple.yaml', 'scenarios/refunds/timeout.yaml']) {
      expect(scenario(yamlAt(VALID_DIR, rel)), JSON.stringify(scenario.errors)).toBe(true);
    }
    for (const rel of ['twins/orders.yaml', 'twins/payments.yaml']) {
      expect(twin(yamlAt(VALID_DIR, rel)), JSON.stringify(twin.errors)).toBe(true);
    }
  });

  it('flags broken files from the corpus', () => {
    const scenario = validator('scenario.schema.json');
    const twin = validator('twin.schema.json');
    for (const name of [
      'scenario-unknown-fault.yaml',
      'scenario-expect-two-kinds.yaml',
      'scenario-missing-input.yaml',
    ]) {
      expect(scenario(yamlAt(CORPUS_DIR, name)), name).toBe(false);
    }
    for (const name of ['twin-bad-risk.yaml', 'twin-unknown-key.yaml', 'twin-bad-tool-name.yaml']) {
      expect(twin(yamlAt(CORPUS_DIR, name)), name).toBe(false);
    }
  });
});
