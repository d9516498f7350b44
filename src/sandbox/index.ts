// The sandbox stage: database engines, templates, clones, state capture and row diff.
export type { Engine, EngineName, QueryRows, Sandbox, SqlSession, Template, TemplateSpec } from './types.js';
export { createPostgresEngine, type PostgresEngineOptions } from './postgres.js';
export { createEmbeddedEngine, startEmbeddedServer, openEmbeddedEngine, type EmbeddedEngineOptions, type EmbeddedServer } from './embedded.js';
export { createTestcontainersEngine, type TestcontainersEngineOptions } from './testcontainers.js';
export { detectContainerRuntime, type RuntimeProbe } from './container-runtime.js';
export { chooseEngine, type EngineOverrides } from './choose.js';
export { applyScenarioState, type ScenarioState } from './apply.js';
export { sweepLeftovers, type SweepResult } from './leftovers.js';
export type { CloneStrategy } from './cluster.js';
