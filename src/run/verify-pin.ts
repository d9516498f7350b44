// Before a pair is classified, its stored runs must prove they are a pair: both sides ran the same
// scenario content, from the same pinned suite, with the same seeds. Anything else is refused.

import type { GradedEpisode, Side } from '../model/episode.js';
import type { PinnedSuite } from '../plan/pin.js';

export class PinMismatchError extends Error {
  constructor(readonly problems: string[]) {
    super(
      `refusing to classify: the stored runs are not a pinned pair:\n${problems.map((p) => `  - ${p}`).join('\n')}`,
    );
    this.name = 'PinMismatchError';
  }
}

/** Every problem that breaks the pinning of a pair's graded episodes (empty: the pair is pinned). */
export function pinProblems(
  pin: Pick<PinnedSuite, 'suiteHash' | 'scenarios'>,
  graded: Map<string, Partial<Record<Side, readonly GradedEpisode[]>>>,
): string[] {
  const problems: string[] = [];
  for (const [id, sides] of graded) {
    const seeds: Partial<Record<Side, string>> = {};
    for (const side of ['base', 'head'] as Side[]) {
      const episodes = sides[side];
      if (!episodes) continue;
      for (const { record } of episodes) {
        if (record.scenario !== id) {
          problems.push(`${record.episode}: stored under ${id} but ran scenario ${record.scenario}`);
        }
        if (!record.pin) {
          problems.push(`${record.episode}: the record does not say which suite it ran`);
          continue;
        }
        if (record.pin.suite !== pin.suiteHash) {
          problems.push(
            `${record.episode}: ran suite ${record.pin.suite.slice(0, 12)}, the pin is ${pin.suiteHash.slice(0, 12)}`,
          );
        }
        if (record.pin.scenario !== pin.scenarios[id]) {
          problems.push(
            `${record.episode}: ran scenario content ${String(record.pin.scenario).slice(0, 12)}, the pin is ${String(pin.scenarios[id]).slice(0, 12)}`,
          );
        }
      }
      seeds[side] = episodes
        .map((e) => e.record.seed)
        .sort((a, b) => a - b)
        .join(',');
    }
    if (
      seeds.base !== undefined &&
      seeds.head !== undefined &&
      seeds.base !== seeds.head &&
      sides.base!.length > 0
    ) {
      // A side cut short by an interruption ran a prefix of the repeats; only different seeds for
      // the same repeats break the pair.
      const byRepeat = (side: Side) => new Map(sides[side]!.map((e) => [e.record.repeat, e.record.seed]));
      const base = byRepeat('base');
      for (const [repeat, seed] of byRepeat('head')) {
        if (base.has(repeat) && base.get(repeat) !== seed) {
          problems.push(`${id} repeat ${repeat}: base ran seed ${base.get(repeat)}, head ran seed ${seed}`);
        }
      }
    }
  }
  return problems;
}

/** Throws PinMismatchError when the stored runs of a pair disagree on what they ran. */
export function verifyPinned(
  pin: Pick<PinnedSuite, 'suiteHash' | 'scenarios'>,
  graded: Map<string, Partial<Record<Side, readonly GradedEpisode[]>>>,
): void {
  const problems = pinProblems(pin, graded);
  if (problems.length > 0) throw new PinMismatchError(problems);
}
