// A small suite whose agent needs a model: one order, a refund tool, and agents that ask the model
// (through the model gateway) before they refund. Two agents: one on the official OpenAI Node SDK,
// one in plain Python (urllib only). Both claim an absurd cost, so a report that believed them shows.
import { chmodSync, cpSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';

/** The cost every test agent claims in its `usage`: never what the report may show. */
export const CLAIMED_USD = 999;

const SCHEMA = `CREATE TABLE orders (id text PRIMARY KEY, refunded numeric NOT NULL DEFAULT 0);
INSERT INTO orders (id) VALUES ('ORD-1');
`;

const TWINS = {
  tools: {
    refund: {
      description: 'Refund part of an order.',
      risk: 'write',
      input: {
        type: 'object',
        properties: { order_id: { type: 'string' }, amount: { type: 'number' } },
        required: ['order_id', 'amount'],
      },
      sql: 'UPDATE orders SET refunded = refunded + :amount WHERE id = :order_id RETURNING id, refunded',
      returns: 'one',
    },
  },
};

/**
 * The Node agent: asks the model (streamed when AGENT_STREAM=1) with the SDK's default retries
 * (AGENT_RETRIES overrides), then refunds; a model error ends it with FAILURE. It writes its own
 * /proc/self/environ to PROOF_DIR so the test can look for the real key in it.
 */
const NODE_AGENT = `import OpenAI from 'openai';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
const input = JSON.parse(readFileSync(0, 'utf8'));
if (process.env.PROOF_DIR)
  writeFileSync(\`\${process.env.PROOF_DIR}/\${process.env.STATEGATE_EPISODE}.environ\`, readFileSync('/proc/self/environ'));
// SNOOP=reversed text: what a hostile agent would do, looking for the provider's key wherever it can read:
// every process's environment and command line, and every file under its HOME, /tmp, /var/tmp,
// /run, /etc and its working directory. What it finds goes to PROOF_DIR.
if (process.env.SNOOP && process.env.PROOF_DIR) {
  // Given reversed, so the needle is in no file or environment but the one holding the key.
  const needle = [...process.env.SNOOP].reverse().join('');
  const found = [];
  const look = (path) => {
    try {
      if (readFileSync(path).includes(needle)) found.push(path);
    } catch {}
  };
  for (const pid of readdirSync('/proc').filter((p) => /^\\d+$/.test(p))) {
    look('/proc/' + pid + '/environ');
    look('/proc/' + pid + '/cmdline');
  }
  let files = 0;
  const walk = (dir, depth) => {
    let names = [];
    try { names = readdirSync(dir); } catch { return; }
    for (const n of names) {
      const p = dir + '/' + n;
      let st;
      try { st = statSync(p); } catch { continue; }
      if (st.isDirectory() && depth < 6 && !p.endsWith('/node_modules')) walk(p, depth + 1);
      else if (st.isFile() && st.size < 4_000_000 && files++ < 20000) look(p);
    }
  };
  for (const root of [process.env.HOME, '/tmp', '/var/tmp', '/run', '/etc', process.cwd()]) if (root) walk(root, 0);
  writeFileSync(\`\${process.env.PROOF_DIR}/\${process.env.STATEGATE_EPISODE}.snoop\`, JSON.stringify({ found, files }));
  console.error('snoop: ' + JSON.stringify({ found, files }));
}
const retries = process.env.AGENT_RETRIES === undefined ? 2 : Number(process.env.AGENT_RETRIES);
const client = new OpenAI({ maxRetries: retries });
const claimed = { input_tokens: 1, output_tokens: 1, cost_usd: ${CLAIMED_USD} };
let text = '';
try {
  const ask = { model: 'gpt-4.1-mini', messages: [{ role: 'user', content: input.message }] };
  if (process.env.AGENT_STREAM === '1') {
    for await (const chunk of await client.chat.completions.create({ ...ask, stream: true }))
      text += chunk.choices[0]?.delta?.content ?? '';
  } else {
    text = (await client.chat.completions.create(ask)).choices[0].message.content;
  }
} catch (err) {
  console.log(JSON.stringify({ reply: 'the model failed: ' + err.status, outcome: 'FAILURE', usage: claimed }));
  process.exit(0);
}
await fetch(process.env.STATEGATE_TOOLS_URL + '/tools/refund', {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ order_id: 'ORD-1', amount: 40 }),
});
console.log(JSON.stringify({ reply: text, outcome: 'SUCCESS', usage: claimed }));
`;

/** The Python agent: the same, on urllib, reading OPENAI_BASE_URL and OPENAI_API_KEY as SDKs do. */
const PYTHON_AGENT = `import json, os, sys, urllib.request
inp = json.load(sys.stdin)
proof = os.environ.get("PROOF_DIR")
if proof:
    with open("/proc/self/environ", "rb") as f, open(f"{proof}/{os.environ['STATEGATE_EPISODE']}.environ", "wb") as out:
        out.write(f.read())
def post(url, body, headers):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"content-type": "application/json", **headers})
    with urllib.request.urlopen(req, timeout=20) as r:
        return json.loads(r.read())
claimed = {"input_tokens": 1, "output_tokens": 1, "cost_usd": ${CLAIMED_USD}}
try:
    answer = post(os.environ["OPENAI_BASE_URL"] + "/chat/completions",
                  {"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": inp["message"]}]},
                  {"authorization": "Bearer " + os.environ["OPENAI_API_KEY"]})
except urllib.error.HTTPError as e:
    print(json.dumps({"reply": f"the model failed: {e.code}", "outcome": "FAILURE", "usage": claimed}))
    sys.exit(0)
post(os.environ["STATEGATE_TOOLS_URL"] + "/tools/refund", {"order_id": "ORD-1", "amount": 40}, {})
print(json.dumps({"reply": answer["choices"][0]["message"]["content"], "outcome": "SUCCESS", "usage": claimed}))
`;

export interface ModelSuiteOptions {
  agent: 'node' | 'python';
  providerUrl: string;
  keyEnv: string;
  /** Extra agent.env (AGENT_STREAM, AGENT_RETRIES, PROOF_DIR). */
  env?: Record<string, string>;
  /** Model faults of the one scenario. */
  faults?: unknown[];
  budget?: { run_usd?: number; episode_usd?: number };
  /** The node_modules the Node agent imports `openai` from (linked in). */
  nodeModules?: string;
  /** A copy of the `openai` package inside the checkout instead (a container sees only the checkout). */
  vendorOpenai?: string;
  isolation?: 'process' | 'container';
  image?: string;
  /** Extra scenarios (copies of the first under other ids). */
  scenarios?: number;
  repeats?: number;
}

export const PRICES = { 'gpt-4.1-mini': { input: 0.4, output: 1.6, cached_input: 0.1 } };

/** Writes the suite into a new directory and returns it. */
export function writeModelSuite(opts: ModelSuiteOptions): string {
  const dir = mkdtempSync(join(tmpdir(), 'sg-model-suite-'));
  // An agent in a container runs as an unprivileged uid of its own: the checkout must be readable.
  chmodSync(dir, 0o755);
  mkdirSync(join(dir, 'scenarios'));
  writeFileSync(join(dir, 'schema.sql'), SCHEMA);
  writeFileSync(join(dir, 'twins.yaml'), stringify(TWINS));
  if (opts.agent === 'node') {
    writeFileSync(join(dir, 'agent.mjs'), NODE_AGENT);
    if (opts.nodeModules) symlinkSync(opts.nodeModules, join(dir, 'node_modules'), 'dir');
    if (opts.vendorOpenai) {
      mkdirSync(join(dir, 'node_modules'));
      // The SDK has no dependencies: the package alone is what the agent imports.
      cpSync(opts.vendorOpenai, join(dir, 'node_modules', 'openai'), { recursive: true });
    }
  } else writeFileSync(join(dir, 'agent.py'), PYTHON_AGENT);
  const count = opts.scenarios ?? 1;
  for (let i = 1; i <= count; i++) {
    const id = i === 1 ? 'refund-with-model' : `refund-with-model-${i}`;
    writeFileSync(
      join(dir, 'scenarios', `${id}.yaml`),
      stringify({
        id,
        input: { message: 'Please refund 40 on ORD-1.' },
        faults: opts.faults ?? [],
        expect: [
          {
            id: 'refunded',
            critical: true,
            query: "SELECT refunded FROM orders WHERE id = 'ORD-1'",
            equals: 40,
          },
        ],
      }),
    );
  }
  const config: Record<string, unknown> = {
    version: 1,
    agent: {
      command: opts.agent === 'node' ? 'node agent.mjs' : 'python3 agent.py',
      timeout: '30s',
      env: opts.env ?? {},
      ...(opts.isolation ? { isolation: opts.isolation } : {}),
      ...(opts.image ? { image: opts.image } : {}),
    },
    database: { engine: 'postgres', schema: ['schema.sql'] },
    twins: ['twins.yaml'],
    scenarios: ['scenarios/*.yaml'],
    repeats: opts.repeats ?? 2,
    concurrency: 1,
    models: { openai: { api: 'openai', url: opts.providerUrl, api_key_env: opts.keyEnv, prices: PRICES } },
    ...(opts.budget ? { budget: opts.budget } : {}),
  };
  writeFileSync(join(dir, 'stategate.yml'), stringify(config));
  return dir;
}
