/** latency: waits `delay` ms, then the exchange goes on to the next fault and the upstream. */
import type { SpecReader } from '../faults/fault.js';
import { readCommon, type HttpFaultBehaviour, type ResolvedCommon } from './fault.js';

export interface HttpLatencySpec extends ResolvedCommon {
  type: 'latency';
  delay: number;
}

export function readHttpLatency(reader: SpecReader): HttpLatencySpec {
  const spec: HttpLatencySpec = {
    type: 'latency',
    ...readCommon(reader),
    delay: reader.number('delay', { min: 0, max: 3_600_000, expected: 'a number of milliseconds in 0..3600000' }),
  };
  reader.done();
  return spec;
}

export function httpLatency(spec: HttpLatencySpec): HttpFaultBehaviour {
  return { readsBody: false, request: () => ({ kind: 'delay', ms: spec.delay }) };
}
