// The Docker daemon the container tests use: STATEGATE_TEST_DOCKER_HOST (a private socket .ci/run
// starts), never the default one, so `engine: auto` elsewhere keeps its choice. Importing it points
// DOCKER_HOST there for this test file only; stategate loads testcontainers lazily, after that.
import { request } from 'node:http';

export const TEST_DOCKER_HOST = process.env.STATEGATE_TEST_DOCKER_HOST;
export const AGENT_IMAGE = process.env.STATEGATE_TEST_AGENT_IMAGE ?? 'stategate-agent:local';
export const IN_CI = Boolean(process.env.CI);
export const NO_DOCKER_MESSAGE =
  'STATEGATE_TEST_DOCKER_HOST is not set: these tests need a Docker daemon on a private socket and ' +
  `the agent image ${AGENT_IMAGE} (.ci/run starts dockerd and runs scripts/agent-image.sh)`;

if (TEST_DOCKER_HOST) {
  process.env.DOCKER_HOST = TEST_DOCKER_HOST;
  // No reaper image can be pulled here; stategate removes its own containers.
  process.env.TESTCONTAINERS_RYUK_DISABLED = 'true';
} else if (!IN_CI) {
  process.stderr.write(`skipping the container tests: ${NO_DOCKER_MESSAGE}\n`);
}

/** Whether a container test file runs: with a daemon, and in CI always (then failing without one). */
export const RUN_CONTAINER_TESTS = Boolean(TEST_DOCKER_HOST) || IN_CI;

/** Throws the reason the container tests cannot run here (CI without a daemon). */
export function requireDocker(): void {
  if (!TEST_DOCKER_HOST) throw new Error(NO_DOCKER_MESSAGE);
}

/** One request to the test daemon's API; the parsed JSON body and the status. */
export function dockerApi(method: string, path: string): Promise<{ status: number; body: any }> {
  const socketPath = (TEST_DOCKER_HOST ?? '').replace(/^unix:\/\//, '');
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method, path }, (res) => {
      let text = '';
      res.on('data', (d) => {
        text += d;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Throws with what to do when the agent image is missing. */
export async function requireAgentImage(): Promise<void> {
  const { status } = await dockerApi('GET', `/images/${encodeURIComponent(AGENT_IMAGE)}/json`);
  if (status !== 200)
    throw new Error(
      `the agent image ${AGENT_IMAGE} is missing on ${TEST_DOCKER_HOST}: run scripts/agent-image.sh`,
    );
}

/** Ids of the agent containers that exist (running or not), of the stategate process `pid`. */
export async function agentContainerIds(pid = process.pid): Promise<string[]> {
  const filters = encodeURIComponent(JSON.stringify({ label: [`dev.stategate.agent.pid=${pid}`] }));
  const { body } = await dockerApi('GET', `/containers/json?all=1&filters=${filters}`);
  return (body as { Id: string }[]).map((c) => c.Id);
}

/**
 * Agent containers of the stategate process `pid` (this one by default) made since `baseline`
 * was taken that still exist: what a run left behind.
 */
export async function agentContainersSince(baseline: string[], pid = process.pid): Promise<string[]> {
  return (await agentContainerIds(pid)).filter((id) => !baseline.includes(id));
}
