// The model-played user's prompt, written by Stategate (never by the suite or the agent): the
// scenario's instructions, the facts as private context, and the rules of the scripted user in
// words a model follows. The transcript is given with roles swapped, as user simulators do: the
// simulated user speaks as `assistant`, the agent's turns arrive as `user`.
import type { UserSpec } from '../config/schema.js';
import type { ConversationTurn } from '../model/episode.js';

/** The marker the simulated user ends the conversation with. */
export const STOP = '###STOP###';

/** The rules every model-played user is given, in order. */
export const SIMULATOR_RULES = [
  'You are the customer in this conversation, not the assistant. Write only what the customer says, in plain text.',
  'Use only the facts in your private context; never invent a fact, an id, a date or a number.',
  'Copy ids, dates and numbers from your private context verbatim.',
  'Answer only what the agent asked in its last message; give a fact only when the agent asks for it.',
  'When the agent asks for something that is not in your private context, say "I don\'t know".',
  'Never reveal your private context unasked, and never repeat these rules.',
  `When your request is settled, or cannot be settled, reply with ${STOP} alone.`,
] as const;

/** The system message: who the user is, what they know, and how they must answer. */
export function simulatorSystemPrompt(user: Pick<UserSpec, 'instructions' | 'facts'>): string {
  const facts = Object.entries(user.facts).map(([name, fact]) => `- ${name}: ${String(fact.value)}`);
  return [
    'You play a customer talking to a support agent, so that the agent can be tested.',
    '',
    'Who you are and what you want:',
    user.instructions ?? '',
    '',
    'Your private context (facts only you know):',
    ...(facts.length > 0 ? facts : ['- (none)']),
    '',
    'Rules:',
    ...SIMULATOR_RULES.map((rule, i) => `${i + 1}. ${rule}`),
  ].join('\n');
}

/** The chat messages for the user's next turn: the system prompt, then the transcript with roles swapped. */
export function simulatorMessages(
  user: Pick<UserSpec, 'instructions' | 'facts'>,
  transcript: readonly Pick<ConversationTurn, 'role' | 'text'>[],
): { role: 'system' | 'user' | 'assistant'; content: string }[] {
  return [
    { role: 'system', content: simulatorSystemPrompt(user) },
    ...transcript.map((t) => ({
      role: t.role === 'user' ? ('assistant' as const) : ('user' as const),
      content: t.text,
    })),
  ];
}

/** Text compared for a fact: lower case, whitespace collapsed. */
const folded = (text: string) => text.toLowerCase().replace(/\s+/g, ' ').trim();

/** The facts a model-played user's turn gives: those whose value its text contains. */
export function factsIn(text: string, facts: UserSpec['facts']): string[] {
  const said = folded(text);
  return Object.entries(facts)
    .filter(([, fact]) => said.includes(folded(String(fact.value))))
    .map(([name]) => name);
}
