/** The HTTP connection_drop fault's declaration (see ../faults/declaration.ts). */
import { MILLISECONDS, type FaultDeclaration } from '../faults/declaration.js';
import type { HttpFaultCounters } from './fault.js';
import type { HttpConnectionDropSpec } from './connection-drop.js';

export const HTTP_CONNECTION_DROP = {
  type: 'connection_drop',
  plane: 'http',
  help: 'the head (announcing the whole body) and after_bytes body bytes, then the connection closes',
  fields: [
    {
      key: 'after_bytes',
      kind: 'integer',
      unit: 'bytes',
      min: 0,
      default: 0,
      expected: 'a whole number of bytes ≥ 0',
      help: 'body bytes sent before the cut',
      argument: { name: 'after_bytes', default: 0, help: 'connection_drop: body bytes before the cut (default 0)' },
      chaosFlag: { name: 'after-bytes' },
    },
    {
      key: 'after_ms',
      kind: 'number',
      unit: 'ms',
      ...MILLISECONDS,
      help: "mcp-chaos-monkey's afterMs: the cut this long after forwarding, before any answer",
    },
  ],
  // A cut at or past the end of a body cuts nothing: that exchange counts `unchanged`.
  acted: (counters) => counters.applications > 0,
  idle:
    'nothing was cut: after_bytes was at or past the end of every response body ' +
    "(give after_bytes below the bodies' size)",
  describe: (spec, probability) =>
    `HTTP Connection Drop: after ` +
    `${spec.after_ms !== undefined ? `${spec.after_ms} ms` : `${spec.after_bytes} body bytes`}, ` +
    `${probability}`,
} as const satisfies FaultDeclaration<HttpFaultCounters, HttpConnectionDropSpec>;
