/**
 * The live fault control plane: one fault model for three doors — proxy flags,
 * the admin API (mcp-chaos-monkey's /chaos/* routes), and proxies an MCP agent holds across calls.
 */
export { FaultRegistry, MAX_ACTIVE_FAULTS } from './registry.js';
export { startAdmin, type AdminServer } from './admin.js';
export { adminRequest } from './client.js';
export { parseFaultConfig, type FaultConfig } from './fault-config.js';
export { HeldLimitError, HeldProxies, HELD_LIMITS, type HeldStatus } from './held.js';
