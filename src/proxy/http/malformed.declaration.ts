/** The HTTP malformed fault's declaration (see ../faults/declaration.ts). */
import type { FaultDeclaration } from '../faults/declaration.js';
import type { HttpFaultCounters } from './fault.js';
import type { HttpMalformedSpec } from './malformed.js';

export const HTTP_MALFORMED = {
  type: 'malformed',
  plane: 'http',
  help: "the upstream's 2xx with a body that is not what its content type says",
  fields: [
    {
      key: 'corrupt_response',
      kind: 'boolean',
      default: true,
      help: "mcp-chaos-monkey's flag: false turns the fault off",
    },
  ],
  acted: (counters) => counters.applications > 0,
  inert: (spec) =>
    spec.corrupt_response
      ? undefined
      : 'the HTTP malformed fault adds nothing (corrupt_response false turns it off): the run measured the ' +
        'endpoint without a fault; leave corrupt_response out, or give true.',
  describe: (_spec, probability) => `HTTP Malformed body, ${probability}`,
} as const satisfies FaultDeclaration<HttpFaultCounters, HttpMalformedSpec>;
