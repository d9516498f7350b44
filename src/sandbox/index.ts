// The sandbox stage: database engines, templates, clones, state capture and row diff.

export { applyScenarioState, type ScenarioState, StateTimeoutError } from './apply.js';
export { chooseEngine, type EngineOverrides } from './choose.js';
export type { CloneStrategy } from './cluster.js';
export { detectContainerRuntime, type RuntimeProbe } from './container-runtime.js';
export {
  createEmbeddedEngine,
  type EmbeddedEngineOptions,
  type EmbeddedServer,
  openEmbeddedEngine,
  startEmbeddedServer,
} from './embedded.js';
export { type SweepResult, sweepLeftovers } from './leftovers.js';
export { createPostgresEngine, type PostgresEngineOptions } from './postgres.js';
export { createTestcontainersEngine, type TestcontainersEngineOptions } from './testcontainers.js';
export type { Engine, EngineName, QueryRows, Sandbox, SqlSession, Template, TemplateSpec } from './types.js';
