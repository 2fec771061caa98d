/**
 * The bounds of a tool-call scenario, in a module without imports: an experiment file's reader checks
 * its toolcall steps against them without loading the scenario runner (the MCP SDK client, ajv, the
 * proxies: ~100 ms of CPU on every `faultline experiment validate|run|export` start).
 */
export const SCENARIO_LIMITS = { calls: 100, tasks: 100, attempts: 2000, runMs: 300_000 };
