// The tool gateway's public surface.
export { createGateway, type GatewayOptions } from './gateway.js';
export { canonicalize, canonicalJson } from './canonical.js';
export { faultDraw } from './faults.js';
export type { Gateway, GatewaySession, SessionSpec } from './types.js';
