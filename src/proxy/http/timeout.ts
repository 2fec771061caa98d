/**
 * timeout: holds the exchange without calling the upstream, for `hang` ms then closes the
 * connection; without `hang`, until the client gives up (or the proxy stops).
 */
import type { SpecReader } from '../faults/fault.js';
import { HTTP_TIMEOUT } from './timeout.declaration.js';
import { readCommon, type HttpFaultBehaviour, type ResolvedCommon } from './fault.js';

export interface HttpTimeoutSpec extends ResolvedCommon {
  type: 'timeout';
  hang: number | undefined;
}

export function readHttpTimeout(reader: SpecReader): HttpTimeoutSpec {
  const spec = { type: 'timeout', ...readCommon(reader), ...reader.declared(HTTP_TIMEOUT.fields) } as HttpTimeoutSpec;
  reader.done();
  return spec;
}

export function httpTimeout(spec: HttpTimeoutSpec): HttpFaultBehaviour {
  return { readsBody: false, request: () => ({ kind: 'hang', ms: spec.hang }) };
}
