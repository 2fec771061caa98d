/** The HTTP timeout fault's declaration (see ../faults/declaration.ts). */
import { MILLISECONDS, type FaultDeclaration } from '../faults/declaration.js';
import type { HttpFaultCounters } from './fault.js';
import type { HttpTimeoutSpec } from './timeout.js';

export const HTTP_TIMEOUT = {
  type: 'timeout',
  plane: 'http',
  help: 'holds the exchange, then closes the connection; the upstream is not called',
  fields: [
    {
      key: 'hang',
      kind: 'number',
      unit: 'ms',
      ...MILLISECONDS,
      aliases: ['hangMs'],
      help: 'held before the connection closes (default: until the client gives up)',
      argument: {
        name: 'hang',
        help: 'timeout: ms held before the connection closes (default until the client gives up)',
      },
      chaosFlag: { name: 'delay', default: 1000 },
    },
  ],
  acted: (counters) => counters.applications > 0,
  describe: (spec, probability) =>
    `HTTP Timeout: ` +
    `${spec.hang === undefined ? 'held until the client gives up' : `held ${spec.hang} ms, then closed`}, ` +
    `${probability}`,
} as const satisfies FaultDeclaration<HttpFaultCounters, HttpTimeoutSpec>;
