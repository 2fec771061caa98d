/** slow_close's declaration (see declaration.ts): Toxiproxy's `slow_close` toxic. */
import type { FaultCounters } from './fault.js';
import type { ResolvedSlowClose } from './slow-close.js';
import { MILLISECONDS, type FaultDeclaration } from './declaration.js';

export const SLOW_CLOSE = {
  type: 'slow_close',
  plane: 'network',
  help: "the end of stream (the peer's FIN) is passed on late, every byte before it on time",
  toxic: { type: 'slow_close' },
  proxyFlag: { name: 'slow-close', help: 'add a slow close: the end of stream is passed on MS late' },
  fields: [
    {
      key: 'delayMs',
      kind: 'number',
      unit: 'ms',
      required: true,
      ...MILLISECONDS,
      help: 'how long the end of stream waits after it was read',
      toxic: { attribute: 'delay' },
      flag: 'slow-close',
    },
  ],
  counts: 'delayed close',
  acted: (counters) => counters.applications > 0,
  describe: (spec, scope) => `Slow Close: ${scope}Delay: ${spec.delayMs} ms`,
} as const satisfies FaultDeclaration<FaultCounters, ResolvedSlowClose>;
