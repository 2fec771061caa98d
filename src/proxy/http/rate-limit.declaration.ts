/** The HTTP rate_limit fault's declaration (see ../faults/declaration.ts). */
import type { FaultDeclaration } from '../faults/declaration.js';
import type { HttpFaultCounters } from './fault.js';
import type { HttpRateLimitSpec } from './rate-limit.js';

export const HTTP_RATE_LIMIT = {
  type: 'rate_limit',
  plane: 'http',
  help: '429 with Retry-After; the upstream is not called',
  fields: [
    {
      key: 'retry_after',
      kind: 'integer',
      unit: 's',
      min: 0,
      max: 86_400,
      default: 60,
      expected: 'whole seconds in 0..86400',
      aliases: ['retryAfterSeconds'],
      help: 'the Retry-After header',
      argument: { name: 'retry_after', default: 60, help: 'rate_limit: Retry-After seconds of the 429 (default 60)' },
      chaosFlag: { name: 'retry-after', default: 60 },
    },
  ],
  acted: (counters) => counters.applications > 0,
  answers: () => 429,
  describe: (spec, probability) => `HTTP Rate Limit: 429, Retry-After ${spec.retry_after}s, ${probability}`,
} as const satisfies FaultDeclaration<HttpFaultCounters, HttpRateLimitSpec>;
