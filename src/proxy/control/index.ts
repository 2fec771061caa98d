/**
 * The live fault control plane: one fault model for three doors — proxy flags,
 * the admin API (mcp-chaos-monkey's /chaos/* routes), and proxies an MCP agent holds across calls.
 */
export { FaultRegistry, MAX_ACTIVE_FAULTS, type FaultStatus, type RegistryEvent } from './registry.js';
export { startAdmin, type AdminServer, type AdminOptions } from './admin.js';
export { adminRequest, AdminRequestError } from './client.js';
export { checkFaultTargets, parseFaultConfig, parseFaultJson, type FaultConfig } from './fault-config.js';
export { HeldLimitError, HeldProxies, HELD_LIMITS, type HeldStatus } from './held.js';
