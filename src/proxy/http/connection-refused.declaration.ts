/** The HTTP connection_refused fault's declaration (see ../faults/declaration.ts): no fields of its own. */
import type { FaultDeclaration } from '../faults/declaration.js';
import type { HttpFaultCounters } from './fault.js';
import type { HttpConnectionRefusedSpec } from './connection-refused.js';

export const HTTP_CONNECTION_REFUSED = {
  type: 'connection_refused',
  plane: 'http',
  help: 'the client connection reset (RST) before any answer; the upstream is not called',
  fields: [],
  acted: (counters) => counters.applications > 0,
  describe: (_spec, probability) => `HTTP Connection Refused (reset), ${probability}`,
} as const satisfies FaultDeclaration<HttpFaultCounters, HttpConnectionRefusedSpec>;
