// The agent adapters (docs/agent-protocol.md): command (one process per episode) and http (a server).
export { DEFAULT_MAX_OUTPUT_BYTES, OutputCapture } from './capture.js';
export { type CommandAgentOptions, runCommandAgent } from './command.js';
export {
  AgentEnvError,
  type AgentEnvOptions,
  baseAgentEnv,
  buildAgentEnv,
  checkAgentEnv,
  episodeEnv,
  isNeverPassed,
} from './env.js';
export { DEFAULT_GRACE_MS } from './process-group.js';
export { checkAgentResult, parseAgentResult, readResultLine } from './result.js';
export {
  type AgentServer,
  type AgentServerOptions,
  AgentStartError,
  type EpisodeRequest,
  episodeBody,
  refuseAnswering,
  startAgentServer,
} from './server.js';
export { runSetup, type SetupOptions, type SetupResult } from './setup.js';
export type { AgentInput, EpisodeVars } from './types.js';
