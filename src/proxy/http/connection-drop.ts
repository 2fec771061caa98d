/**
 * connection_drop: forwards, then sends the response's status line and headers (content-length
 * of the whole body) and exactly `after_bytes` bytes of its body, and closes the connection: the
 * client sees a body cut short. mcp-chaos-monkey's `afterMs` (its code cuts by time, not bytes) is
 * accepted as `after_ms`: the connection closes that long after forwarding, before any answer.
 */
import { MILLISECONDS, type SpecReader } from '../faults/fault.js';
import { readCommon, type HttpFaultBehaviour, type ResolvedCommon } from './fault.js';

export interface HttpConnectionDropSpec extends ResolvedCommon {
  type: 'connection_drop';
  after_bytes: number;
  after_ms: number | undefined;
}

export function readHttpConnectionDrop(reader: SpecReader): HttpConnectionDropSpec {
  const common = readCommon(reader);
  const afterMs = reader.optionalNumber('after_ms', MILLISECONDS);
  const afterBytes = reader.number('after_bytes', { min: 0, default: 0, expected: 'a whole number of bytes ≥ 0' });
  if (!Number.isInteger(afterBytes)) reader.fail('after_bytes', 'a whole number of bytes ≥ 0');
  const spec: HttpConnectionDropSpec = {
    type: 'connection_drop',
    ...common,
    after_bytes: afterBytes,
    after_ms: afterMs,
  };
  reader.done();
  return spec;
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
