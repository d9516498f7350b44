import path from 'node:path';
import { loadSuite } from './src/config/load.js';
import { createInputSchemaChecker } from './src/config/input-schema.js';
const t0 = performance.now();
for (let i = 0; i < 5; i++) { const a = createInputSchemaChecker(); a.validateSchema({type: 'object'}); }
console.log('ajv create+meta x5', (performance.now() - t0).toFixed(0));
for (let i = 0; i < 5; i++) {
  const t = performance.now();
  await loadSuite('test/config/fixtures/valid/stategate.yml', { env: { STATEGATE_ENGINE: 'postgres', REPEATS: '3' } });
  console.log('load', (performance.now() - t).toFixed(0));
}
