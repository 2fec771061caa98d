/**
 * The proxy's names and limits that tool schemas and descriptions quote: a leaf module (no
 * imports), so the MCP server can build its tool list without loading the proxy itself. The fault
 * modules re-export these; this is their one definition.
 */

export const LATENCY_DISTRIBUTIONS = ['normal', 'uniform', 'pareto', 'pareto_normal'] as const;

export const LOSS_MODELS = ['bernoulli', 'gilbert_elliott'] as const;

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

/** A bandwidth cap per connection (the default) or one cap shared by every connection. */
export const BANDWIDTH_SCOPES = ['connection', 'shared'] as const;

/**
 * The network faults' defaults that every door applies the same way (the fault's own validator,
 * so the admin API, --http-fault, the proxy tools, `faultline proxy` and the scenarios agree).
 */
export const NETWORK_FAULT_DEFAULTS = {
  /** jitter: redraws of the delay per second. */
  jitterFrequencyHz: 5,
} as const;

/** faultline's network faults (src/proxy/faults); `latency` is also an HTTP fault (faultKind tells). */
export const NETWORK_FAULT_TYPES = ['latency', 'jitter', 'packet_loss', 'bandwidth', 'blackhole'] as const;

/**
 * Network faults that end or cut connections (Toxiproxy's timeout, reset_peer, slow_close,
 * slicer and limit_data toxics, src/toxiproxy/toxics.ts): taken by every proxy fault list (the
 * admin API, the proxy tools, the Toxiproxy API), not (yet) a scenario's one fault.
 */
export const CONNECTION_FAULT_TYPES = ['stall', 'reset_peer', 'slow_close', 'slicer', 'limit_data'] as const;

export const HTTP_FAULT_TYPES = [
  'latency',
  'error',
  'rate_limit',
  'timeout',
  'malformed',
  'schema_mismatch',
  'connection_refused',
  'connection_drop',
] as const;

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
