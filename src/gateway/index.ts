// The tool gateway's public surface.

export { type EpisodeDeadline, episodeDeadline } from './deadline.js';
export { faultDraw } from './faults.js';
export { createGateway, type GatewayOptions } from './gateway.js';
export type { Gateway, GatewaySession, SessionSpec } from './types.js';
