// A GitHub event payload written to a file the way the runner writes it, and read back the way the
// action reads it (GITHUB_EVENT_PATH and the variables beside it).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readEvent } from '../../src/action/event.js';

/** A commit the events name for the workflow's own run. */
export const EVENT_SHA = 'a'.repeat(40);

/** Writes `payload` into `dir` as the `name` event of acme/refunds at EVENT_SHA and reads it as the action does. */
export function readEventFile(dir: string, name: string, payload: unknown) {
  const path = join(dir, `${name}-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(path, JSON.stringify(payload));
  return readEvent({
    GITHUB_EVENT_NAME: name,
    GITHUB_EVENT_PATH: path,
    GITHUB_REPOSITORY: 'acme/refunds',
    GITHUB_SHA: EVENT_SHA,
  });
}
