/** limit_data's declaration (see declaration.ts): Toxiproxy's `limit_data` toxic. */
import type { FaultCounters } from './fault.js';
import type { ResolvedLimitData } from './limit-data.js';
import type { FaultDeclaration } from './declaration.js';

export const LIMIT_DATA = {
  type: 'limit_data',
  plane: 'network',
  help: 'exactly `bytes` pass, counted per connection and direction; then end of stream and close',
  toxic: { type: 'limit_data' },
  proxyFlag: {
    name: 'limit-data',
    help: 'add a data limit: BYTES pass per connection and direction, then the stream ends',
  },
  fields: [
    {
      key: 'bytes',
      kind: 'integer',
      unit: 'bytes',
      required: true,
      min: 0,
      max: Number.MAX_SAFE_INTEGER,
      expected: 'a whole number of bytes, 0 or more',
      help: 'bytes passed before the stream ends',
      toxic: { attribute: 'bytes' },
      flag: 'limit-data',
    },
  ],
  counts: 'cut stream',
  acted: (counters) => counters.applications > 0,
  describe: (spec, scope) => `Limit Data: ${scope}Bytes: ${spec.bytes}`,
} as const satisfies FaultDeclaration<FaultCounters, ResolvedLimitData>;
