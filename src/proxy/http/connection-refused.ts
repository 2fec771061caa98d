/** connection_refused: resets the client's connection (TCP RST) before any answer; the upstream is not called. */
import { type HttpFaultBehaviour, type ResolvedCommon } from './fault.js';

export interface HttpConnectionRefusedSpec extends ResolvedCommon {
  type: 'connection_refused';
}

export function httpConnectionRefused(): HttpFaultBehaviour {
  return { readsBody: false, request: () => ({ kind: 'reset' }) };
}
