/** connection_refused: resets the client's connection (TCP RST) before any answer; the upstream is not called. */
import type { SpecReader } from '../faults/fault.js';
import { readCommon, type HttpFaultBehaviour, type ResolvedCommon } from './fault.js';

export interface HttpConnectionRefusedSpec extends ResolvedCommon {
  type: 'connection_refused';
}

export function readHttpConnectionRefused(reader: SpecReader): HttpConnectionRefusedSpec {
  const spec: HttpConnectionRefusedSpec = { type: 'connection_refused', ...readCommon(reader) };
  reader.done();
  return spec;
}

export function httpConnectionRefused(): HttpFaultBehaviour {
  return { readsBody: false, request: () => ({ kind: 'reset' }) };
}
