// LLM agents in containers (agent.isolation: container, no network but the forwarded sockets) reach
// their model through the model gateway: the provider sees the real key, the agent (searching its
// whole view) never does. Against a scripted provider that is not a model; a real Docker daemon.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GradedEpisode } from '../../src/model/episode.js';
import { runCompare } from '../../src/run/pipeline.js';
import { ROOT } from '../helpers/demo-repo.js';
import { AGENT_IMAGE, RUN_CONTAINER_TESTS, requireDocker } from '../helpers/docker.js';
import { writeModelSuite } from '../helpers/model-suite.js';
import { type ScriptedProvider, startScriptedProvider } from '../helpers/scripted-provider.js';

const ADMIN_URL = process.env.STATEGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const KEY_ENV = 'SG_TEST_PROVIDER_KEY';
const KEY_TAIL = 'kept-by-the-harness-c0ffee';
const REAL_KEY = `sk-real-container-test-key-${KEY_TAIL}`;

let provider: ScriptedProvider;
const dirs: string[] = [];
beforeAll(async () => {
  process.env[KEY_ENV] = REAL_KEY;
  provider = await startScriptedProvider();
});
afterAll(async () => {
  delete process.env[KEY_ENV];
  await provider?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.runIf(RUN_CONTAINER_TESTS)('LLM agents in containers', () => {
  for (const agent of ['node', 'python'] as const) {
    it(`${agent}: the model is reached through the forwarded socket, with the real key on the provider only`, {
      timeout: 300_000,
    }, async () => {
      requireDocker();
      const dir = writeModelSuite({
        agent,
        providerUrl: provider.url,
        keyEnv: KEY_ENV,
        isolation: 'container',
        image: AGENT_IMAGE,
        repeats: 1,
        vendorOpenai: agent === 'node' ? join(ROOT, 'node_modules', 'openai') : undefined,
        // No shared directory is mounted in a container: the snooper reports on its stderr.
        env: agent === 'node' ? { SNOOP: [...KEY_TAIL].reverse().join(''), PROOF_DIR: '/tmp' } : {},
      });
      dirs.push(dir);
      const before = provider.requests.length;
      const out = join(dir, '.stategate');
      const { report } = await runCompare({
        base: dir,
        head: dir,
        repo: dir,
        out,
        engine: 'postgres',
        databaseUrl: ADMIN_URL,
      });
      const episodes = readFileSync(join(out, 'episodes.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as GradedEpisode);
      expect(episodes.map((e) => e.record.agent.resultError)).toEqual([undefined, undefined]);
      expect(report.verdict).toBe('PASS');
      const seen = provider.requests.slice(before);
      expect(seen.length).toBe(2);
      for (const r of seen) expect(r.headers.authorization).toBe(`Bearer ${REAL_KEY}`);
      for (const e of episodes) {
        expect(e.record.modelCalls?.map((c) => c.status)).toEqual([200]);
        expect(e.record.agent.stdout).not.toContain(KEY_TAIL);
        if (agent === 'node') {
          const snoop = /snoop: (\{.*\})/.exec(e.record.agent.stderr)?.[1];
          expect(snoop).toBeDefined();
          const { found, files } = JSON.parse(snoop!) as { found: string[]; files: number };
          expect(found).toEqual([]);
          expect(files).toBeGreaterThan(0);
        }
      }
    });
  }
});
