/**
 * The probe's defaults and bounds, quoted by fault_probe_mcp_server's schema: a leaf module, so the
 * MCP server can describe that tool without loading the probe runner.
 */

export const PROBE_DEFAULTS = { cases: 8, seed: 1, callTimeoutMs: 5000, overallTimeoutMs: 120_000 } as const;
export const PROBE_LIMITS = { cases: 100, callTimeoutMs: 60_000, overallTimeoutMs: 600_000 } as const;
