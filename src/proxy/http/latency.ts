/** latency: waits `delay` ms, then the exchange goes on to the next fault and the upstream. */
import type { SpecReader } from '../faults/fault.js';
import { HTTP_LATENCY } from './latency.declaration.js';
import { readCommon, type HttpFaultBehaviour, type ResolvedCommon } from './fault.js';

export interface HttpLatencySpec extends ResolvedCommon {
  type: 'latency';
  delay: number;
}

export function readHttpLatency(reader: SpecReader): HttpLatencySpec {
  const spec = { type: 'latency', ...readCommon(reader), ...reader.declared(HTTP_LATENCY.fields) } as HttpLatencySpec;
  reader.done();
  return spec;
}

export function httpLatency(spec: HttpLatencySpec): HttpFaultBehaviour {
  return { readsBody: false, request: () => ({ kind: 'delay', ms: spec.delay }) };
}
