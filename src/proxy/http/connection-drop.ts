/**
 * connection_drop: forwards, then sends the response's status line and headers (content-length
 * of the whole body) and exactly `after_bytes` bytes of its body, and closes the connection: the
 * client sees a body cut short. mcp-chaos-monkey's `afterMs` (its code cuts by time, not bytes) is
 * accepted as `after_ms`: the connection closes that long after forwarding, before any answer.
 */
import { type HttpFaultBehaviour, type ResolvedCommon } from './fault.js';

export interface HttpConnectionDropSpec extends ResolvedCommon {
  type: 'connection_drop';
  after_bytes: number;
  after_ms: number | undefined;
}

export function httpConnectionDrop(spec: HttpConnectionDropSpec): HttpFaultBehaviour {
  return {
    readsBody: false,
    request: () => ({ kind: 'after_response' }),
    response: () =>
      spec.after_ms !== undefined
        ? { kind: 'cut_after_ms', ms: spec.after_ms }
        : { kind: 'cut', afterBytes: spec.after_bytes },
  };
}
