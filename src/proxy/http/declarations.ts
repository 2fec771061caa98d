/**
 * Every HTTP fault's declaration, in the order the doors list them. A new fault adds its
 * `<fault>.declaration.ts` here and its behaviour in spec.ts (a reader there too if its spec is more than its
 * declared fields); every door follows.
 */
import { HTTP_CONNECTION_DROP } from './connection-drop.declaration.js';
import { HTTP_CONNECTION_REFUSED } from './connection-refused.declaration.js';
import { HTTP_ERROR } from './error.declaration.js';
import { HTTP_LATENCY } from './latency.declaration.js';
import { HTTP_MALFORMED } from './malformed.declaration.js';
import { HTTP_RATE_LIMIT } from './rate-limit.declaration.js';
import { HTTP_SCHEMA_MISMATCH } from './schema-mismatch.declaration.js';
import { HTTP_TIMEOUT } from './timeout.declaration.js';

export const HTTP_FAULTS = [
  HTTP_LATENCY,
  HTTP_ERROR,
  HTTP_RATE_LIMIT,
  HTTP_TIMEOUT,
  HTTP_MALFORMED,
  HTTP_SCHEMA_MISMATCH,
  HTTP_CONNECTION_REFUSED,
  HTTP_CONNECTION_DROP,
] as const;
export type HttpFaultType = (typeof HTTP_FAULTS)[number]['type'];
