/**
 * timeout: holds the exchange without calling the upstream, for `hang` ms then closes the
 * connection; without `hang`, until the client gives up (or the proxy stops).
 */
import { type HttpFaultBehaviour, type ResolvedCommon } from './fault.js';

export interface HttpTimeoutSpec extends ResolvedCommon {
  type: 'timeout';
  hang: number | undefined;
}

export function httpTimeout(spec: HttpTimeoutSpec): HttpFaultBehaviour {
  return { readsBody: false, request: () => ({ kind: 'hang', ms: spec.hang }) };
}
