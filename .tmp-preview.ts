import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { loadSuite } from './src/config/load.js';
import { formatProblem } from './src/config/suite.js';
import { CORPUS_DIR, VALID_ENV, corpusTarget, makeSuite, tempRoot } from './test/config/helpers.js';
const root = await tempRoot();
const only = process.argv[2];
for (const name of (await readdir(CORPUS_DIR)).sort()) {
  if (only && !name.includes(only)) continue;
  const bytes = await readFile(path.join(CORPUS_DIR, name));
  const dir = await makeSuite(root.dir, { [corpusTarget(name)]: bytes });
  const t = Date.now();
  const r = await loadSuite(path.join(dir, 'stategate.yml'), { env: VALID_ENV });
  console.log(`== ${name} (${Date.now() - t} ms)`);
  if (r.ok) console.log('   LOADED OK');
  else for (const p of r.problems) console.log('   ' + formatProblem({ ...p, file: p.file.replace(dir + '/', '') }));
}
await root.remove();
