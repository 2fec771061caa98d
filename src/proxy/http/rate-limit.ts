/** rate_limit: answers 429 Too Many Requests with `Retry-After: retry_after` (seconds), upstream not called. */
import { jsonAnswer, type HttpFaultBehaviour, type ResolvedCommon } from './fault.js';

export interface HttpRateLimitSpec extends ResolvedCommon {
  type: 'rate_limit';
  retry_after: number;
}

export function httpRateLimit(spec: HttpRateLimitSpec): HttpFaultBehaviour {
  return {
    readsBody: false,
    request: () => jsonAnswer(429, { error: 'Too Many Requests' }, [['retry-after', String(spec.retry_after)]]),
  };
}
