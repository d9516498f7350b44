// Writes report.html beside report.json: the report and the episodes of episodes.jsonl (when the run
// left one in the same directory) rendered into one self-contained page.
import { closeSync, existsSync, openSync, readSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { GradedEpisode } from '../model/episode.js';
import type { Report } from '../model/report.js';
import { renderHtml } from '../report/html/page.js';
import { viewerData } from '../report/html/viewer-data.js';

/** The lines of a file, read in chunks so a large episodes file is never one string. */
function* lines(path: string): Generator<string> {
  const fd = openSync(path, 'r');
  try {
    const chunk = Buffer.alloc(1 << 20);
    let rest = '';
    for (;;) {
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      const parts = (rest + chunk.toString('utf8', 0, n)).split('\n');
      rest = parts.pop() ?? '';
      yield* parts;
    }
    if (rest) yield rest;
  } finally {
    closeSync(fd);
  }
}

function isGraded(v: unknown): v is GradedEpisode {
  const e = v as GradedEpisode;
  return (
    typeof e?.record?.scenario === 'string' &&
    (e.record.side === 'base' || e.record.side === 'head') &&
    typeof e.record.repeat === 'number' &&
    Array.isArray(e.record.calls) &&
    typeof e.record.diff?.tables === 'object' &&
    typeof e.record.agent?.stderr === 'string' &&
    Array.isArray(e.results)
  );
}

/** The graded episodes of an episodes.jsonl; a line that is not one (cut by an interruption) is skipped. */
export function* readEpisodes(path: string): Generator<GradedEpisode> {
  for (const line of lines(path)) {
    if (!line.trim()) continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      continue;
    }
    if (isGraded(value)) yield value;
  }
}

/** Writes `outDir/report.html`; returns its path. */
export function writeHtmlReport(report: Report, outDir: string): string {
  // Only a file name in the same directory: a report's own field never points the page elsewhere.
  const name = report.episodes_file ? basename(report.episodes_file) : 'episodes.jsonl';
  const episodesPath = join(outDir, name);
  const episodes = existsSync(episodesPath) ? readEpisodes(episodesPath) : null;
  const path = join(outDir, 'report.html');
  writeFileSync(
    path,
    renderHtml(viewerData(report, episodes, { report: 'report.json', episodes: episodes ? name : null })),
  );
  return path;
}
