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
import type { FaultDeclaration } from '../faults/declaration.js';
import type { HttpFaultCounters } from './fault.js';
import type { ResolvedHttpFault } from './spec.js';

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

/** An HTTP fault's declaration by type, typed loosely for the code that serves every fault alike. */
export function httpFault(type: string): FaultDeclaration<HttpFaultCounters, ResolvedHttpFault> | undefined {
  return HTTP_FAULTS.find((fault) => fault.type === type) as never;
}

/**
 * Why a validated HTTP fault injects nothing whatever the traffic, or undefined: a probability of 0 (any of the
 * eight), else its declaration's `inert` (a latency of 0 ms). The scenario verdict says it up front; the fault list
 * counts its won draws `unchanged`.
 */
export function httpFaultInert(spec: ResolvedHttpFault): string | undefined {
  if (spec.probability === 0)
    return (
      `the HTTP ${spec.type.replace(/_/g, ' ')} fault adds nothing (probability 0): no request can draw it, ` +
      'so the run measured the endpoint without a fault; give probability above 0.'
    );
  return httpFault(spec.type)?.inert?.(spec);
}
