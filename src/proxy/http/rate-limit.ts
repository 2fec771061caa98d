/** rate_limit: answers 429 Too Many Requests with `Retry-After: retry_after` (seconds), upstream not called. */
import type { SpecReader } from '../faults/fault.js';
import { jsonAnswer, readCommon, type HttpFaultBehaviour, type ResolvedCommon } from './fault.js';

export interface HttpRateLimitSpec extends ResolvedCommon {
  type: 'rate_limit';
  retry_after: number;
}

export function readHttpRateLimit(reader: SpecReader): HttpRateLimitSpec {
  const spec: HttpRateLimitSpec = {
    type: 'rate_limit',
    ...readCommon(reader),
    retry_after: reader.number('retry_after', {
      min: 0,
      max: 86_400,
      default: 60,
      expected: 'whole seconds in 0..86400',
    }),
  };
  if (!Number.isInteger(spec.retry_after)) reader.fail('retry_after', 'whole seconds in 0..86400');
  reader.done();
  return spec;
}

export function httpRateLimit(spec: HttpRateLimitSpec): HttpFaultBehaviour {
  return {
    readsBody: false,
    request: () => jsonAnswer(429, { error: 'Too Many Requests' }, [['retry-after', String(spec.retry_after)]]),
  };
}
