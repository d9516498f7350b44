// Who plays the user of an episode: the scripted user for `user:` without `model: true`; for
// `model: true`, the run's user simulator (user_simulator), whose turns are pinned across the pair
// by the run's cache.
import type { Scenario } from '../config/schema.js';
import type { UserPlayer } from './driver.js';
import { scriptedPlayer } from './driver.js';
import { ScriptedUser } from './scripted-user.js';

/** The episode a user plays in: its scenario, side, repeat and seed. */
export interface PlayedEpisode {
  side: 'base' | 'head';
  repeat: number;
  seed: number;
}

/** What the run provides for model-played users. */
export interface UserPlayers {
  /** A player for one episode of a `user.model` scenario. */
  simulator(scenario: Scenario, episode: PlayedEpisode): UserPlayer;
}

/** The player of one episode's user; throws when a model-played user has no simulator configured. */
export function userPlayer(scenario: Scenario, episode: PlayedEpisode, players?: UserPlayers): UserPlayer {
  const user = scenario.user;
  if (!user) throw new Error(`scenario ${scenario.id} has no user`);
  if (!user.model) return scriptedPlayer(new ScriptedUser(user));
  if (!players)
    throw new Error(
      `scenario ${scenario.id} (${scenario.file}) has user.model: true, but stategate.yml sets no user_simulator: name one of models and a model (user_simulator: {model: PROVIDER/MODEL})`,
    );
  return players.simulator(scenario, episode);
}
