/**
 * The scenario arguments' defaults, quoted by the tools' descriptions and applied by input.ts and
 * http-fault.ts: a leaf module (type imports, and the proxy's leaf vocabulary), so the MCP server can describe its scenario
 * tools without loading the scenario runner, the proxy or the load generator.
 */
import type { Direction, Side } from '../proxy/index.js';
import { NETWORK_FAULT_DEFAULTS } from '../proxy/vocabulary.js';

export const SCENARIO_DEFAULTS = {
  method: 'GET',
  duration: '10s',
  // 20 requests/s over 10 connections: each connection is busy a fifth of the time even with a
  // 100 ms fault, so the default run measures the fault, not a queue for connections.
  num_clients: 10,
  rps: 2,
  timeout: 10,
  direction: 'ingress' as Direction,
  side: 'server' as Side,
  latency: 100,
  deviation: 0,
  amplitude: 20,
  frequency: NETWORK_FAULT_DEFAULTS.jitterFrequencyHz,
  rate: 1000,
  unit: 'bps',
  loss_rate: 0.05,
} as const;

export const HTTP_SCENARIO_DEFAULTS = {
  http_fault: 'error',
  status_code: 500,
  probability: 1,
  delay: 100,
  retry_after: 60,
  after_bytes: 0,
} as const;
