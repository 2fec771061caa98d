/** stall's declaration (see declaration.ts): Toxiproxy's `timeout` toxic. */
import type { FaultCounters } from './fault.js';
import type { ResolvedStall } from './stall.js';
import { MILLISECONDS, type FaultDeclaration } from './declaration.js';

export const STALL = {
  type: 'stall',
  plane: 'network',
  help: 'nothing passes (nothing is lost); the connection closes `timeoutMs` after the fault reached it',
  toxic: { type: 'timeout' },
  proxyFlag: {
    name: 'stall',
    help: 'add a stall: nothing passes; the connection closes MS after the fault reached it (0: held until it ends)',
  },
  fields: [
    {
      key: 'timeoutMs',
      kind: 'number',
      unit: 'ms',
      required: true,
      ...MILLISECONDS,
      help: 'close the connection this long after the fault reached it; 0: hold until the fault is removed',
      toxic: { attribute: 'timeout' },
      flag: 'stall',
    },
  ],
  counts: 'held stream',
  acted: (counters) => counters.applications > 0,
  describe: (spec, scope) => `Stall: ${scope}Timeout: ${spec.timeoutMs} ms`,
} as const satisfies FaultDeclaration<FaultCounters, ResolvedStall>;
