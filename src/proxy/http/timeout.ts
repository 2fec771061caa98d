/**
 * timeout: holds the exchange without calling the upstream, for `hang` ms then closes the
 * connection; without `hang`, until the client gives up (or the proxy stops).
 */
import type { SpecReader } from '../faults/fault.js';
import { readCommon, type HttpFaultBehaviour, type ResolvedCommon } from './fault.js';

export interface HttpTimeoutSpec extends ResolvedCommon {
  type: 'timeout';
  hang: number | undefined;
}

export function readHttpTimeout(reader: SpecReader): HttpTimeoutSpec {
  const spec: HttpTimeoutSpec = {
    type: 'timeout',
    ...readCommon(reader),
    hang: reader.optionalNumber('hang', { min: 0, max: 3_600_000, expected: 'a number of milliseconds in 0..3600000' }),
  };
  reader.done();
  return spec;
}

export function httpTimeout(spec: HttpTimeoutSpec): HttpFaultBehaviour {
  return { readsBody: false, request: () => ({ kind: 'hang', ms: spec.hang }) };
}
