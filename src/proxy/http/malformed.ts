/**
 * malformed: forwards, then answers a 2xx (the upstream's, or 200) whose body is not what its
 * content type says: a marker, then the first half of the real body, cut. `corrupt_response:
 * false` (mcp-chaos-monkey's flag, which it never reads) turns the fault off.
 */
import { type HttpFaultBehaviour, type ResolvedCommon } from './fault.js';

export interface HttpMalformedSpec extends ResolvedCommon {
  type: 'malformed';
  corrupt_response: boolean;
}

const MARKER = Buffer.from('<<<faultline: malformed>>>{{{{');

export function httpMalformed(spec: HttpMalformedSpec): HttpFaultBehaviour {
  return {
    readsBody: true,
    request: () => ({ kind: 'after_response' }),
    response(response) {
      if (!spec.corrupt_response) return { kind: 'replace', response };
      const ok = response.status >= 200 && response.status < 300;
      const headers = response.headers.some(([k]) => k.toLowerCase() === 'content-type')
        ? response.headers
        : [...response.headers, ['content-type', 'application/json'] as [string, string]];
      return {
        kind: 'replace',
        response: {
          status: ok ? response.status : 200,
          statusMessage: ok ? response.statusMessage : 'OK',
          headers,
          body: Buffer.concat([MARKER, response.body.subarray(0, Math.floor(response.body.length / 2))]),
        },
      };
    },
  };
}
