/** latency: waits `delay` ms, then the exchange goes on to the next fault and the upstream. */
import { type HttpFaultBehaviour, type ResolvedCommon } from './fault.js';

export interface HttpLatencySpec extends ResolvedCommon {
  type: 'latency';
  delay: number;
}

export function httpLatency(spec: HttpLatencySpec): HttpFaultBehaviour {
  return { readsBody: false, request: () => ({ kind: 'delay', ms: spec.delay }) };
}
