/**
 * The proxy's names and limits that tool schemas and descriptions quote: a leaf module (it imports
 * only the faults' declarations, leaves too), so the MCP server can build its tool list without
 * loading the proxy itself. The fault modules re-export these; this is their one definition.
 */
import {
  CONNECTION_FAULTS,
  NETWORK_FAULTS,
  type ConnectionFaultType,
  type NetworkFaultType,
} from './faults/declarations.js';
import { HTTP_FAULTS, type HttpFaultType } from './http/declarations.js';

export { LATENCY_DISTRIBUTIONS } from './faults/latency.declaration.js';
export { LOSS_MODELS } from './faults/packet-loss.declaration.js';

/** Bytes per second per bandwidth unit: bytes unless the unit says bit. */
export const UNIT_BYTES: Readonly<Record<string, number>> = {
  bps: 1,
  kbps: 1e3,
  mbps: 1e6,
  gbps: 1e9,
  'bit/s': 1 / 8,
  'kbit/s': 1e3 / 8,
  'mbit/s': 1e6 / 8,
  'gbit/s': 1e9 / 8,
};
export const BANDWIDTH_UNITS = Object.keys(UNIT_BYTES);

/** faultline's network faults (src/proxy/faults), from their declarations; `latency` is also an HTTP fault (faultKind
 * tells). */
export const NETWORK_FAULT_TYPES = NETWORK_FAULTS.map((fault) => fault.type) as unknown as readonly [
  NetworkFaultType,
  ...NetworkFaultType[],
];

/** faultline's HTTP faults (src/proxy/http), from their declarations. */
export const HTTP_FAULT_TYPES = HTTP_FAULTS.map((fault) => fault.type) as unknown as readonly [
  HttpFaultType,
  ...HttpFaultType[],
];

/** Network faults that end or cut connections (faults/declarations.ts), from their declarations. */
export const CONNECTION_FAULT_TYPES = CONNECTION_FAULTS.map((fault) => fault.type) as unknown as readonly [
  ConnectionFaultType,
  ...ConnectionFaultType[],
];

export const HELD_LIMITS = {
  /** Proxies held at once, per server (one per MCP connection or HTTP session). */
  maxHeld: 8,
  /** Proxies held at once by the whole process, over every connection and session. */
  maxHeldPerProcess: 32,
  defaultTtlMs: 10 * 60_000,
  maxTtlMs: 60 * 60_000,
  /** Mappings per proxy. */
  maxMappings: 16,
  /** Faults per list. */
  maxFaults: 32,
  /** Connection events kept per proxy for status. */
  events: 20,
};
