// Attack surface: the harness running as root (CI containers do). The agent must not be root: it
// runs as an unprivileged user without capabilities, with a HOME of its own, and still reads its
// checkout, wherever that is (under /tmp, or under a directory only root can enter). As a normal
// user, it keeps the harness's uid, without capabilities.
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  AGENT_GID,
  AGENT_HOME,
  AGENT_UID,
  NEUTRAL_CHECKOUT,
  probeIsolation,
} from '../../src/agent/namespace.js';
import { type AttackSuite, attackSuite, runAttack } from './attack-suite.js';

const asRoot = process.getuid?.() === 0;
const NO_CAPS = '0000000000000000';
const cleanup: string[] = [];
afterAll(() => {
  for (const dir of cleanup) rmSync(dir, { recursive: true, force: true });
});

function whoamiSuite(parent?: string): AttackSuite {
  const suite = attackSuite('whoami.mjs', {}, parent);
  cleanup.push(suite.dir);
  return suite;
}

describe('who the agent runs as', () => {
  for (const engine of ['embedded', 'postgres'] as const) {
    it(`is not root, has no capabilities and reads its checkout (${engine} engine)`, {
      timeout: 300_000,
    }, async () => {
      const suite = whoamiSuite();
      const { found, episode } = await runAttack(suite, engine);
      expect(found.capEff).toBe(NO_CAPS);
      expect(found.noNewPrivs).toBe(asRoot ? '1' : found.noNewPrivs);
      expect(found.readsCheckout).toBe(true);
      // The checkout keeps its path (its parent is recreated in the agent's own /tmp).
      expect(found.cwd).toBe(suite.dir);
      if (asRoot) {
        expect(found.uid).toBe(AGENT_UID);
        expect(found.gid).toBe(AGENT_GID);
        expect(found.groups).not.toContain(0);
        expect(found.capBnd).toBe(NO_CAPS);
        expect(found.home).toBe(AGENT_HOME);
        expect(found.homeOwner).toBe(AGENT_UID);
        expect(found.homeWritable).toBe(true);
        // Root's home is closed to it, or an empty directory in its place.
        expect(found.rootHome ?? []).toEqual([]);
      } else {
        expect(found.uid).toBe(process.getuid?.());
      }
      expect(episode.passed).toBe(true);
    });
  }

  it.runIf(asRoot)(
    'reads a checkout below a directory only root can enter',
    { timeout: 300_000 },
    async () => {
      // Outside /tmp, so the agent's own /tmp does not recreate its parents.
      const closed = mkdtempSync('/var/tmp/sg-root-only-');
      cleanup.push(closed);
      const suite = whoamiSuite(closed);
      const { found } = await runAttack(suite, 'postgres');
      expect(found.uid).toBe(AGENT_UID);
      expect(found.readsCheckout).toBe(true);
      // The sandbox builds the folders above the checkout afresh, so it stays at its own path;
      // the unshare fallback mounts it where nobody can reach it.
      const status = await probeIsolation();
      const sandboxed = status.mode === 'namespaces' && status.sandbox !== undefined;
      expect(found.cwd).toBe(sandboxed ? realpathSync(suite.dir) : NEUTRAL_CHECKOUT);
    },
  );

  it.runIf(asRoot)(
    'runs agent.setup as that user too, and says why it cannot write a root-owned checkout',
    {
      timeout: 300_000,
    },
    async () => {
      const suite = whoamiSuite();
      const config = join(suite.dir, 'stategate.yml');
      writeFileSync(
        config,
        readFileSync(config, 'utf8').replace(
          '  command:',
          '  setup: id -u > drop/setup-uid && touch installed\n  command:',
        ),
      );
      await expect(runAttack(suite, 'postgres')).rejects.toThrow(
        /agent\.setup ran as uid 65534, which cannot write/,
      );
      expect(readFileSync(join(suite.drop, 'setup-uid'), 'utf8')).toBe(`${AGENT_UID}\n`);
      expect(existsSync(join(suite.dir, 'installed'))).toBe(false);
    },
  );
});
