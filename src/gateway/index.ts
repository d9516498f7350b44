// The tool gateway's public surface.

export { type EpisodeDeadline, episodeDeadline } from './deadline.js';
export { faultDraw } from './faults.js';
export { createGateway, type GatewayOptions } from './gateway.js';
export type { EpisodeSession, Gateway, SessionSpec } from './types.js';
