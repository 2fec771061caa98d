/** The HTTP error fault's declaration (see ../faults/declaration.ts). */
import type { FaultDeclaration } from '../faults/declaration.js';
import type { HttpFaultCounters } from './fault.js';
import type { HttpErrorSpec } from './error.js';

export const HTTP_ERROR = {
  type: 'error',
  plane: 'http',
  help: 'answers the status without calling the upstream; forward: true calls it, then replaces its answer',
  fields: [
    {
      key: 'status_code',
      kind: 'integer',
      min: 400,
      max: 599,
      default: 500,
      expected: 'an HTTP status in 400..599',
      help: 'the status answered',
      argument: { name: 'status_code', default: 500, help: 'error: status, 400..599 (default 500)' },
      chaosFlag: { name: 'status', default: 503 },
      fis: { parameter: 'statusCode' },
    },
    {
      key: 'error_body',
      kind: 'string',
      help: 'the body answered (default {"error":"faultline injected error"})',
      argument: { name: 'error_body', help: 'error: body (default {"error":"faultline injected error"})' },
    },
    { key: 'message', kind: 'string', help: 'mcp-chaos-monkey\'s message, answered as {"error": message}' },
    {
      key: 'forward',
      kind: 'boolean',
      default: false,
      help: 'call the upstream first, then replace its answer',
      argument: { name: 'forward', help: 'error: call the upstream first, then replace its answer (default false)' },
    },
  ],
  // With forward, an upstream that answered this status and body already was not changed: `unchanged`.
  acted: (counters) => counters.applications > 0,
  idle: 'the upstream already answered status_code with the same body (forward)',
  answers: (spec) => spec.status_code,
  describe: (spec, probability) =>
    `HTTP Error: Status: ${spec.status_code}, ${probability}${spec.forward ? ', forwarded first' : ', not forwarded'}`,
} as const satisfies FaultDeclaration<HttpFaultCounters, HttpErrorSpec>;
