// The scripted user of a conversation scenario (docs/formats/scenario.md): deterministic, pure, and
// its rules applied to each agent turn in this order, first match wins:
//   1. the agent ended the conversation (`done: true`): it ends;
//   2. facts whose `asked` phrases occur in the turn: their replies, joined in `facts` order;
//   3. else the next unused `say` turn;
//   4. else, if the turn holds a question mark: `unknown`;
//   5. else the user ends the conversation.
import type { UserSpec } from '../config/schema.js';
import { compileAsked } from '../expectations/asked.js';
import type { SuitePattern } from '../expectations/pattern.js';

/** What the agent said in one turn, as the harness read it. */
export interface AgentTurnText {
  reply: string;
  done: boolean;
}

/** The user's answer to one agent turn: a message (with the facts it gives), or the end. */
export type UserAnswer = { end: 'agent' | 'user' } | { end?: undefined; text: string; facts: string[] };

interface CompiledFact {
  name: string;
  answer: string;
  asked: SuitePattern[];
}

/** One scripted user for one episode: it remembers which `say` turns it has used. */
export class ScriptedUser {
  private readonly facts: CompiledFact[];
  private said = 0;

  /** Throws on an `asked` entry that does not compile; the loader reports those before any run. */
  constructor(private readonly spec: Pick<UserSpec, 'facts' | 'say' | 'unknown'>) {
    this.facts = Object.entries(spec.facts).map(([name, fact]) => ({
      name,
      answer: fact.reply ?? String(fact.value),
      asked: (fact.asked ?? []).map((entry) => {
        const compiled = compileAsked(entry);
        if ('error' in compiled)
          throw new Error(`user.facts.${name}.asked ${JSON.stringify(entry)}: ${compiled.error}`);
        return compiled.pattern;
      }),
    }));
  }

  /** The user's answer to one agent turn. */
  answer(turn: AgentTurnText): UserAnswer {
    if (turn.done) return { end: 'agent' };
    const asked = this.facts.filter((f) => f.asked.some((p) => p.test(turn.reply)));
    if (asked.length > 0) {
      return { text: asked.map((f) => f.answer).join(' '), facts: asked.map((f) => f.name) };
    }
    if (this.said < this.spec.say.length) return { text: this.spec.say[this.said++], facts: [] };
    if (turn.reply.includes('?')) return { text: this.spec.unknown, facts: [] };
    return { end: 'user' };
  }
}
