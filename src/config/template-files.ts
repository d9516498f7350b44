// The template's files (docs/formats/stategate.md, database.schema and database.fixtures): SQL text applied
// in order, and fixtures as SQL or as rows per table from YAML or JSON.
import path from 'node:path';
import { z } from 'zod';
import type { TemplateSpec } from '../model/engine.js';
import type { Row } from '../model/episode.js';
import { notAMapping } from './scenario-file.js';
import { displayPath, readTextFile, suitePath } from './source-file.js';
import type { Problem } from './suite.js';
import { namedFileProblem, type SuiteDir } from './suite-paths.js';
import { type FieldPath, parseYaml, problemAt, type YamlSource } from './yaml-source.js';
import { validate } from './zod-problems.js';

const FixtureRows = z.record(z.string().min(1), z.array(z.record(z.string(), z.unknown())));

/** One file named in the config, with where the config names it (for "file not found"). */
export interface NamedFile {
  /** As written in the config, relative to the suite root. */
  name: string;
  /** The config field that names it, e.g. ['database', 'schema', 0]. */
  field: FieldPath;
}

/** Reads the schema and fixture files into a TemplateSpec, recording each file's raw text in `files`. */
export async function loadTemplateFiles(
  schema: NamedFile[],
  fixtures: NamedFile[],
  dir: SuiteDir,
  config: YamlSource,
  files: Record<string, string>,
): Promise<{ template: TemplateSpec; problems: Problem[] }> {
  const problems: Problem[] = [];
  const template: TemplateSpec = { schema: [], fixtures: [] };
  const root = dir.root;
  const read = async (named: NamedFile) => {
    // Checked before reading: a file outside the suite is never opened.
    const outside = await namedFileProblem(config, named, dir);
    if (outside) {
      problems.push(outside);
      return null;
    }
    const abs = path.resolve(root, named.name);
    const result = await readTextFile(abs, displayPath(abs));
    if (result.ok) {
      files[suitePath(root, abs)] = result.text;
      return { rel: suitePath(root, abs), file: displayPath(abs), text: result.text };
    }
    problems.push(
      result.missing ? problemAt(config, named.field, `file not found: ${displayPath(abs)}`) : result.problem,
    );
    return null;
  };

  const schemaTexts = await Promise.all(schema.map(read));
  for (const s of schemaTexts) if (s) template.schema.push({ file: s.rel, sql: s.text });

  const fixtureKinds = fixtures.map((f) => fixtureKind(f.name));
  const fixtureTexts = await Promise.all(
    fixtures.map((f, i) => {
      if (fixtureKinds[i]) return read(f);
      problems.push(
        problemAt(
          config,
          f.field,
          `a fixture is a .sql, .yaml, .yml or .json file, got '${path.basename(f.name)}'`,
        ),
      );
      return null;
    }),
  );
  fixtureTexts.forEach((f, i) => {
    if (!f) return;
    if (fixtureKinds[i] === 'sql') {
      template.fixtures.push({ file: f.rel, sql: f.text });
      return;
    }
    const rows = readFixtureRows(f.file, f.text);
    if (rows.ok) template.fixtures.push({ file: f.rel, rows: rows.rows });
    else problems.push(...rows.problems);
  });
  return { template, problems };
}

function fixtureKind(name: string): 'sql' | 'rows' | null {
  const ext = path.extname(name).toLowerCase();
  if (ext === '.sql') return 'sql';
  return ['.yaml', '.yml', '.json'].includes(ext) ? 'rows' : null;
}

/** Parses a rows fixture: `{ table: [ {col: value}, ... ] }`. */
function readFixtureRows(
  file: string,
  text: string,
): { ok: true; rows: Record<string, Row[]> } | { ok: false; problems: Problem[] } {
  const parsed = parseYaml(file, text);
  if (parsed.problems.length > 0) return { ok: false, problems: parsed.problems };
  const value = parsed.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return {
      ok: false,
      problems: [notAMapping(parsed.source, value, 'a list of rows per table: { table: [ {col: value} ] }')],
    };
  }
  const result = validate(FixtureRows, value, parsed.source);
  return result.ok ? { ok: true, rows: result.data } : { ok: false, problems: result.problems };
}
