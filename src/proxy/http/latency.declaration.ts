/** The HTTP latency fault's declaration (see ../faults/declaration.ts). */
import { MILLISECONDS, type FaultDeclaration } from '../faults/declaration.js';
import type { HttpFaultCounters } from './fault.js';
import type { HttpLatencySpec } from './latency.js';

export const HTTP_LATENCY = {
  type: 'latency',
  plane: 'http',
  help: 'waits, then goes on to the next fault and the upstream',
  fields: [
    {
      key: 'delay',
      kind: 'number',
      unit: 'ms',
      required: true,
      ...MILLISECONDS,
      aliases: ['delayMs'],
      help: 'wait before the request is forwarded',
      argument: { name: 'delay', default: 100, help: 'latency: ms before forwarding (default 100)' },
      chaosFlag: { name: 'delay', default: 1000 },
    },
  ],
  // A delay of 0 ms changes nothing: its won draws count `unchanged`, not applications.
  acted: (counters) => counters.applications > 0,
  inert: (spec) =>
    spec.delay === 0
      ? 'the HTTP latency fault adds nothing (delay 0 ms): the run measured the endpoint without a fault; ' +
        'give delay above 0.'
      : undefined,
  describe: (spec, probability) => `HTTP Latency: ${spec.delay.toFixed(2)} ms, ${probability}`,
} as const satisfies FaultDeclaration<HttpFaultCounters, HttpLatencySpec>;
