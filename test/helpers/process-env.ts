// Variables a test file sets in its own process (the harness's environment, where a runner puts its
// secrets) for the whole file, and puts back afterwards.
import { afterAll, beforeAll } from 'vitest';

/** Sets `vars` in process.env before the file's tests and restores what was there after them. */
export function setEnvForFile(vars: Record<string, string>): void {
  const saved: Record<string, string | undefined> = {};
  beforeAll(() => {
    for (const [name, value] of Object.entries(vars)) {
      saved[name] = process.env[name];
      process.env[name] = value;
    }
  });
  afterAll(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });
}
