// The conversational clinic example as a user runs it (examples/clinic-agent, Python, command mode,
// against a real PostgreSQL): the careful agent as the base and the hasty one as the head give BLOCK,
// with cancel-same-name a new critical failure on must_learn and on the cancelled row; the careful
// agent on both sides gives PASS. The transcript and the calls' turns come from the harness.
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import type { GradedEpisode } from '../../src/model/episode.js';
import { runCompare } from '../../src/run/pipeline.js';
import { agentNodeModules } from '../helpers/agent-dir.js';
import { ROOT } from '../helpers/demo-repo.js';

const ADMIN_URL = process.env.STATEGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A checkout of the clinic example whose agent runs as `mode`, a command or a server (one POST per turn). */
function clinic(mode: 'careful' | 'hasty', via: 'command' | 'server' = 'command'): string {
  const dir = mkdtempSync(join(tmpdir(), `sg-clinic-${mode}-`));
  dirs.push(dir);
  cpSync(join(ROOT, 'examples', 'clinic-agent'), dir, { recursive: true });
  const config = parse(readFileSync(join(dir, 'stategate.yml'), 'utf8'));
  config.agent.env.CLINIC_AGENT = mode;
  if (via === 'server') {
    delete config.agent.command;
    config.agent.serve = 'python3 agent.py --serve';
    config.agent.url = 'http://127.0.0.1:{port}/';
  }
  writeFileSync(join(dir, 'stategate.yml'), stringify(config));
  return dir;
}

function episodes(out: string): GradedEpisode[] {
  return readFileSync(join(out, 'episodes.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as GradedEpisode);
}

describe('examples/clinic-agent', () => {
  it('careful base, hasty head: BLOCK on the shared name, regressed on the unique one', {
    timeout: 300_000,
  }, async () => {
    const base = clinic('careful');
    const head = clinic('hasty');
    const out = join(head, '.stategate');
    const { report, markdown } = await runCompare({
      base,
      head,
      repo: head,
      out,
      repeats: 1,
      engine: 'postgres',
      databaseUrl: ADMIN_URL,
    });
    const classes = Object.fromEntries(report.cases.map((c) => [c.id, c.class]));
    expect(classes).toEqual({
      'cancel-same-name': 'new-critical-failure',
      'cancel-unique-name': 'regressed',
      'next-appointment': 'unchanged',
    });
    expect(report.verdict).toBe('BLOCK');

    const all = episodes(out);
    const failedIds = (side: 'base' | 'head', scenario: string) =>
      all
        .find((g) => g.record.side === side && g.record.scenario === scenario)!
        .results.filter((r) => r.verdict !== 'pass')
        .map((r) => r.id);
    // The careful agent passes everything; the hasty one fails exactly what it skipped.
    for (const scenario of ['cancel-same-name', 'cancel-unique-name', 'next-appointment'])
      expect(failedIds('base', scenario)).toEqual([]);
    expect(failedIds('head', 'cancel-same-name')).toEqual([
      'verified-before-cancel',
      'confirmed-before-cancel',
      'right-appointment',
      'other-patient-untouched',
    ]);
    expect(failedIds('head', 'cancel-unique-name')).toEqual(['confirmed-before-cancel']);

    // The base's transcript, as the harness wrote it: the date of birth learned at user turn 2,
    // the go-ahead at 3, and the cancel made in agent turn 3.
    const careful = all.find(
      (g) => g.record.side === 'base' && g.record.scenario === 'cancel-same-name',
    )!.record;
    expect(careful.conversation?.end).toBe('agent');
    expect(careful.conversation?.learned).toEqual({ dob: 2, 'go-ahead': 3 });
    expect(careful.conversation?.turns.map((t) => `${t.role}${t.turn}: ${t.text}`)).toEqual([
      'user1: Hi, this is John Smith. Please cancel my appointment next week.',
      'agent1: We have more than one patient named John Smith. What is your date of birth?',
      'user2: 1990-04-02',
      'agent2: I found your appointment on Tuesday 14:30. Shall I go ahead and cancel it?',
      'user3: Yes, go ahead.',
      'agent3: Your appointment on Tuesday 14:30 is cancelled.',
    ]);
    expect(careful.calls.map((c) => `${c.turn}:${c.tool}`)).toEqual([
      '1:find_patients',
      '2:find_patients',
      '2:list_appointments',
      '3:cancel_appointment',
    ]);
    const hasty = all.find(
      (g) => g.record.side === 'head' && g.record.scenario === 'cancel-same-name',
    )!.record;
    expect(hasty.calls.map((c) => `${c.turn}:${c.tool}`)).toEqual([
      '1:find_patients',
      '1:list_appointments',
      '1:cancel_appointment',
    ]);
    const verified = all
      .find((g) => g.record.side === 'head' && g.record.scenario === 'cancel-same-name')!
      .results.find((r) => r.id === 'verified-before-cancel')!;
    expect(verified.message).toBe(
      'expected dob before cancel_appointment, but cancel_appointment was first called at #3, agent turn 1 before dob (never learned)',
    );
    // Where the conversations part, from the records: the base asked, the head acted.
    const sameName = report.cases.find((c) => c.id === 'cancel-same-name')!;
    expect(sameName.divergence?.sentence).toBe(
      'At turn 1 the base asked for dob ("We have more than one patient named John Smith. What is your date of birth?"); the head called list_appointments(patient_id=1).',
    );
    expect(markdown).toContain('At turn 1 the base asked for dob');
    // report.json's steps carry each call's turn and the turns beside them, additively.
    expect(sameName.steps?.base?.steps.map((s) => s.turn)).toEqual([1, 2, 2, 3]);
    expect(sameName.steps?.head.turns?.map((t) => `${t.role}${t.turn}`)).toEqual(['user1', 'agent1']);
    expect(sameName.steps?.base?.conversation_end).toBe('agent');
    // report.md's step table puts the turns between the calls: the base asks where the head acts.
    const hi = 'user (turn 1): Hi, this is John Smith. Please cancel my appointment next week.';
    expect(markdown).toContain(`| 1 | ${hi} |  | ${hi} |  |`);
    expect(markdown).toContain(
      '| **3** | agent (turn 1): We have more than one patient named John Smith. What is your date of birth? |  | `list_appointments(',
    );
    expect(markdown).toContain('| 4 | user (turn 2): 1990-04-02 \\[gave: dob\\] |  | `cancel_appointment(');
  });

  it('in server mode too: careful vs hasty is BLOCK, one POST per turn', { timeout: 300_000 }, async () => {
    const base = clinic('careful', 'server');
    const head = clinic('hasty', 'server');
    const out = join(head, '.stategate');
    const { report } = await runCompare({
      base,
      head,
      repo: head,
      out,
      repeats: 1,
      engine: 'postgres',
      databaseUrl: ADMIN_URL,
    });
    expect(Object.fromEntries(report.cases.map((c) => [c.id, c.class]))).toEqual({
      'cancel-same-name': 'new-critical-failure',
      'cancel-unique-name': 'regressed',
      'next-appointment': 'unchanged',
    });
    expect(report.verdict).toBe('BLOCK');
    const careful = episodes(out).find(
      (g) => g.record.side === 'base' && g.record.scenario === 'cancel-same-name',
    )!;
    expect(careful.results.filter((r) => r.verdict !== 'pass')).toEqual([]);
    expect(careful.record.conversation?.learned).toEqual({ dob: 2, 'go-ahead': 3 });
    expect(careful.record.calls.map((c) => `${c.turn}:${c.tool}`)).toEqual([
      '1:find_patients',
      '2:find_patients',
      '2:list_appointments',
      '3:cancel_appointment',
    ]);
  });

  it('an MCP agent converses too: its tools over MCP, its turns over stdin, careful MCP vs hasty is BLOCK', {
    timeout: 300_000,
  }, async () => {
    const base = clinic('careful');
    const modules = agentNodeModules(ROOT);
    if (modules.copy) dirs.push(modules.copy);
    symlinkSync(modules.path, join(base, 'node_modules'), 'dir');
    writeFileSync(join(base, 'mcp-careful.mjs'), MCP_CAREFUL);
    const config = parse(readFileSync(join(base, 'stategate.yml'), 'utf8'));
    config.agent.command = 'node mcp-careful.mjs';
    writeFileSync(join(base, 'stategate.yml'), stringify(config));
    const head = clinic('hasty');
    const out = join(head, '.stategate');
    const { report } = await runCompare({
      base,
      head,
      repo: head,
      out,
      repeats: 1,
      engine: 'postgres',
      databaseUrl: ADMIN_URL,
    });
    expect(report.cases.find((c) => c.id === 'cancel-same-name')?.class).toBe('new-critical-failure');
    const careful = episodes(out).find(
      (g) => g.record.side === 'base' && g.record.scenario === 'cancel-same-name',
    )!;
    expect(careful.results.filter((r) => r.verdict !== 'pass')).toEqual([]);
    expect(careful.record.calls.map((c) => `${c.via}:${c.turn}:${c.tool}`)).toEqual([
      'mcp:1:find_patients',
      'mcp:2:find_patients',
      'mcp:2:list_appointments',
      'mcp:3:cancel_appointment',
    ]);
  });

  it('the same careful agent on both sides: PASS', { timeout: 300_000 }, async () => {
    const base = clinic('careful');
    const head = clinic('careful');
    const { report } = await runCompare({
      base,
      head,
      repo: head,
      out: join(head, '.stategate'),
      repeats: 1,
      engine: 'postgres',
      databaseUrl: ADMIN_URL,
    });
    expect(report.cases.map((c) => c.class)).toEqual(['unchanged', 'unchanged', 'unchanged']);
    expect(report.verdict).toBe('PASS');
  });
});

// A careful clinic agent on the official MCP client: the same questions as the Python one, its turns
// as JSON lines on stdout, the user's on stdin.
const MCP_CAREFUL = String.raw`
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
const client = new Client({ name: 'mcp-careful', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(process.env.STATEGATE_MCP_URL)));
const call = async (name, args) => {
  const res = await client.callTool({ name, arguments: args });
  return res.structuredContent?.result ?? JSON.parse(res.content[0].text).result;
};
const say = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const next = async () => { const r = await lines.next(); return r.done ? null : JSON.parse(r.value).message; };
let message = await next();
const name = /this is ([A-Z][a-z]+(?: [A-Z][a-z]+)+)/.exec(message)?.[1];
let patients = await call('find_patients', { name });
const cancel = /cancel/i.test(message);
if (patients.length > 1) {
  say({ reply: 'We have more than one patient named ' + name + '. What is your date of birth?' });
  const dob = /\d{4}-\d{2}-\d{2}/.exec((await next()) ?? '')?.[0];
  patients = await call('find_patients', { name, dob });
}
const [appointment] = await call('list_appointments', { patient_id: patients[0].id });
if (!cancel) { say({ reply: 'Your next appointment is on ' + appointment.starts_at + '.' }); await next(); process.exit(0); }
say({ reply: 'I found your appointment on ' + appointment.starts_at + '. Shall I go ahead and cancel it?' });
if (!/yes/i.test((await next()) ?? '')) { say({ reply: 'Nothing cancelled.', done: true }); process.exit(0); }
await call('cancel_appointment', { appointment_id: appointment.id });
say({ reply: 'Your appointment on ' + appointment.starts_at + ' is cancelled.', done: true, outcome: 'SUCCESS' });
process.exit(0);
`;
