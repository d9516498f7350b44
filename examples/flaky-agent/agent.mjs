#!/usr/bin/env node
// A support agent with a seeded coin flip: when a name matches several customers it picks one by a
// draw from STATEGATE_SEED instead of using the email address in the message. The same seed always
// gives the same pick (no clock, no Math.random), so a failing repeat can be replayed exactly;
// different repeats get different seeds, so the side is flaky.
import { createHash } from 'node:crypto';
import { httpTools } from '../refund-agent/http-tools.mjs';
import { parseInput, printResult, readStdin } from '../refund-agent/protocol.mjs';

const NAME = /\bthis is ([A-Z][a-z]+(?: [A-Z][a-z]+)+)/;

/** A number in [0, 1) drawn from the episode seed and a label: the same inputs give the same draw. */
function seededDraw(seed, label) {
  return createHash('sha256').update(`${seed}\0${label}`).digest().readUInt32BE(0) / 2 ** 32;
}

try {
  const toolsUrl = process.env.STATEGATE_TOOLS_URL;
  const seed = process.env.STATEGATE_SEED;
  if (!toolsUrl) throw new Error('STATEGATE_TOOLS_URL is not set: run this agent under stategate');
  if (!seed) throw new Error('STATEGATE_SEED is not set: run this agent under stategate');
  const { message } = parseInput(await readStdin());
  const tools = httpTools(toolsUrl);
  const steps = [];
  const call = async (name, args) => {
    const r = await tools.call(name, args);
    steps.push({ tool: name, args, status: r.status, ok: r.ok });
    return r;
  };
  const finish = (outcome, reply) =>
    printResult({ reply, outcome, tool_calls: steps, usage: usageFor(steps) });

  const name = NAME.exec(message)?.[1];
  if (!name) {
    finish('FAILURE', 'Could you tell me your full name so I can find your account?');
  } else {
    const found = await call('find_customers', { name });
    const matches = found.ok && Array.isArray(found.result) ? found.result : [];
    if (matches.length === 0) {
      finish('FAILURE', `I could not find a customer called ${name}.`);
    } else {
      // The flaw on purpose: guess among the matches rather than use the email address given.
      const pick = matches[Math.floor(seededDraw(seed, 'pick-customer') * matches.length)];
      const sent = await call('send_email', {
        customer_id: pick.id,
        subject: 'Your receipt',
        body: 'Here is the receipt for your last order.',
      });
      if (sent.ok)
        finish('SUCCESS', `I have sent the receipt to the email address on your account, ${name}.`);
      else finish('FAILURE', 'I could not send the receipt right now. Please try again later.');
    }
  }
} catch (err) {
  process.stderr.write(`flaky-agent: ${err.message}\n`);
  process.exitCode = 1;
}

/** Synthetic, deterministic usage so cost columns show something. */
function usageFor(steps) {
  const input = 700 + 300 * steps.length;
  const output = 50 + 40 * (steps.length + 1);
  return {
    input_tokens: input,
    output_tokens: output,
    cost_usd: Math.round(((input * 2.5 + output * 10) / 1e6) * 1e6) / 1e6,
  };
}
