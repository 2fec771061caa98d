/** bandwidth's declaration (see declaration.ts): its fields, their spellings, and when it acted. */
import type { FaultCounters } from './fault.js';
import type { ResolvedBandwidth } from './bandwidth.js';
import type { FaultDeclaration } from './declaration.js';

export const BANDWIDTH_SCOPES = ['connection', 'shared'] as const;
/** Above a terabyte per second a cap caps nothing a loopback test can send. */
export const MAX_BYTES_PER_SECOND = 1e12;

export const BANDWIDTH = {
  type: 'bandwidth',
  plane: 'network',
  help: 'a token bucket releasing bytes at the rate, per connection or shared',
  scenario: 'caps the bandwidth',
  proxyFlag: { name: 'bandwidth', help: 'add a bandwidth cap of RATE in --bandwidth-unit' },
  // Toxiproxy's rate is in KB/s, and 0 passes everything.
  toxic: { type: 'bandwidth', inert: (attributes) => (attributes['rate'] ?? 0) <= 0 },
  fields: [
    {
      key: 'bytesPerSecond',
      kind: 'number',
      unit: 'bytes/s',
      required: true,
      above: 0,
      max: MAX_BYTES_PER_SECOND,
      expected: `a number of bytes per second above 0, at most ${MAX_BYTES_PER_SECOND}`,
      help: 'the cap',
      flag: 'bandwidth',
      toxic: { attribute: 'rate', scale: 1000 },
      argument: { name: 'rate', default: 1000, min: 0, unitArgument: 'unit', help: 'Cap in unit (default 1000)' },
    },
    {
      key: 'unit',
      argumentOnly: true,
      kind: 'string',
      default: 'bps',
      help: 'bps, kbps, mbps, gbps (bytes/s ×1, 1e3, 1e6, 1e9) or bit/s, kbit/s, mbit/s, gbit/s',
      flag: 'bandwidth-unit',
      argument: {
        name: 'unit',
        default: 'bps',
        help:
          'Bytes as fault means it: bps (B/s), kbps (1e3 B/s), mbps, gbps; ' +
          'or bit/s, kbit/s, mbit/s, gbit/s (default bps)',
      },
    },
    {
      key: 'scope',
      kind: 'enum',
      values: BANDWIDTH_SCOPES,
      default: 'connection',
      help: 'whether each connection has its own cap or all share one',
      flag: 'bandwidth-scope',
      argument: { name: 'bandwidth_scope', help: 'Per connection (default) or all together' },
    },
  ],
  counts: 'paced piece',
  acted: (counters) => counters.applications > 0,
  describe: (spec, scope) =>
    `Bandwidth: ${scope}Rate: ${Math.round(spec.bytesPerSecond)}Bps${spec.scope === 'shared' ? ' (shared)' : ''}`,
} as const satisfies FaultDeclaration<FaultCounters, ResolvedBandwidth>;
