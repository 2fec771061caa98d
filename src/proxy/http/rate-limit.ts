/** rate_limit: answers 429 Too Many Requests with `Retry-After: retry_after` (seconds), upstream not called. */
import type { SpecReader } from '../faults/fault.js';
import { HTTP_RATE_LIMIT } from './rate-limit.declaration.js';
import { jsonAnswer, readCommon, type HttpFaultBehaviour, type ResolvedCommon } from './fault.js';

export interface HttpRateLimitSpec extends ResolvedCommon {
  type: 'rate_limit';
  retry_after: number;
}

export function readHttpRateLimit(reader: SpecReader): HttpRateLimitSpec {
  const spec = {
    type: 'rate_limit',
    ...readCommon(reader),
    ...reader.declared(HTTP_RATE_LIMIT.fields),
  } as HttpRateLimitSpec;
  reader.done();
  return spec;
}

export function httpRateLimit(spec: HttpRateLimitSpec): HttpFaultBehaviour {
  return {
    readsBody: false,
    request: () => jsonAnswer(429, { error: 'Too Many Requests' }, [['retry-after', String(spec.retry_after)]]),
  };
}
