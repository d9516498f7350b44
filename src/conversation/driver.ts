// One conversation, whatever carries it (stdin/stdout lines, or one POST per turn): the harness's
// side of the protocol. It numbers the turns, asks the user for each answer, decides when the
// conversation ends and writes the transcript; nothing in it is taken from the agent but the text
// of its turns. The tool gateway asks it for the current turn to tag each call.
import type { Conversation, ConversationEnd, ConversationTurn, SimulatorUsage } from '../model/episode.js';
import type { AgentTurnText, UserAnswer } from './scripted-user.js';

/** Whoever plays the user: the script, or a model through the harness. */
export interface UserPlayer {
  /** The answer to the agent's latest turn; the transcript so far ends with that turn. */
  answer(turn: AgentTurnText, transcript: readonly ConversationTurn[]): Promise<UserAnswer>;
  /** A model-played user's spend so far, apart from the agent's. */
  usage?(): SimulatorUsage;
}

/** The user could not answer (a model-played user that is down, refused or said nothing). */
export class SimulatorError extends Error {}

/** What the harness sends next: the user's turn, or nothing (stdin is closed). */
export type NextUserTurn = { message: string; turn: number } | null;

export class ConversationDriver {
  private readonly turns: ConversationTurn[] = [];
  private readonly learned: Record<string, number> = {};
  private current = 1;
  private ended: ConversationEnd | undefined;
  private error: string | undefined;

  constructor(
    private readonly user: UserPlayer,
    readonly maxTurns: number,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** The agent turn in progress: the number of the last user turn sent. */
  get turn(): number {
    return this.current;
  }

  /** Whether the conversation is over (the harness sends nothing more). */
  get over(): boolean {
    return this.ended !== undefined;
  }

  /** Records the scenario's message as user turn 1; it gives no fact. */
  open(message: string): { message: string; turn: number } {
    this.turns.push({ role: 'user', turn: 1, text: message, at: this.now().toISOString(), facts: [] });
    return { message, turn: 1 };
  }

  /** Records one agent turn and returns the user's next turn, or null when the conversation ends. */
  async agentTurn(turn: AgentTurnText): Promise<NextUserTurn> {
    if (this.ended) return null;
    this.turns.push({ role: 'agent', turn: this.current, text: turn.reply, at: this.now().toISOString() });
    let answer: UserAnswer;
    try {
      answer = await this.user.answer(turn, this.turns);
    } catch (err) {
      if (!(err instanceof SimulatorError)) throw err;
      this.end('simulator_error', err.message);
      return null;
    }
    if (answer.end !== undefined) {
      this.end(answer.end);
      return null;
    }
    if (this.current >= this.maxTurns) {
      this.end('max_turns', `the agent took all ${this.maxTurns} turns and the user still had to answer`);
      return null;
    }
    this.current += 1;
    for (const fact of answer.facts) this.learned[fact] ??= this.current;
    this.turns.push({
      role: 'user',
      turn: this.current,
      text: answer.text,
      at: this.now().toISOString(),
      facts: answer.facts,
    });
    return { message: answer.text, turn: this.current };
  }

  /** Ends it from outside: the agent left, timed out, or the user simulator failed. First end wins. */
  end(end: ConversationEnd, error?: string): void {
    if (this.ended) return;
    this.ended = end;
    if (error !== undefined) this.error = error;
  }

  /** The transcript as the episode record keeps it. */
  record(): Conversation {
    return {
      turns: [...this.turns],
      maxTurns: this.maxTurns,
      end: this.ended ?? 'agent_left',
      learned: { ...this.learned },
      ...(this.error !== undefined ? { error: this.error } : {}),
      ...(this.user.usage ? { simulator: this.user.usage() } : {}),
    };
  }
}

/** A player for the scripted user (synchronous rules behind the async interface). */
export function scriptedPlayer(user: { answer(turn: AgentTurnText): UserAnswer }): UserPlayer {
  return { answer: async (turn) => user.answer(turn) };
}
