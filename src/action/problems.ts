// Configuration problems as annotations: paths made relative to the repository so GitHub can place them.
import { isAbsolute, relative, resolve, sep } from 'node:path';
import type { Problem } from '../config/suite.js';
import { plainText } from '../report/escape.js';
import type { CheckAnnotation } from './annotations.js';

/** A problem's place in the repository; `file` is absent when the file lies outside it (a base worktree). */
export interface ProblemPlace {
  file?: string;
  line: number;
  col: number;
  message: string;
}

/** Where a problem is, relative to the workspace; the loader gives paths relative to the working directory. */
export function placeProblem(p: Problem, workspace: string, cwd = process.cwd()): ProblemPlace {
  const abs = resolve(cwd, p.file);
  const rel = relative(workspace, abs);
  const inside = rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
  const message = `${p.path ? `${p.path}: ` : ''}${p.message}`;
  return inside
    ? { file: rel.split(sep).join('/'), line: p.line, col: p.col, message }
    : { line: p.line, col: p.col, message: `${p.file}:${p.line}:${p.col}: ${message}` };
}

/** Failure annotations for the check run, one per problem that lies in the repository. */
export function problemAnnotations(places: ProblemPlace[]): CheckAnnotation[] {
  return places
    .filter((p) => p.file !== undefined)
    .map((p) => ({
      path: p.file!,
      start_line: Math.max(1, p.line),
      end_line: Math.max(1, p.line),
      annotation_level: 'failure' as const,
      title: 'stategate: invalid suite',
      message: plainText(p.message),
    }));
}
