/**
 * k6's objects, built once for every export (a scenario's script, an experiment's): the
 * constant-arrival-rate scenario of an open-loop load and an SLO as a threshold, written with the
 * operator the SLO was written with (`p95 < 200ms` is `p(95)<200`, never `<=`).
 */
import { InputError } from '../kernel/errors.js';
import type { Slo } from '../scenario/index.js';
import { goDuration } from './chaos-mesh.js';
import { asGiven, type Spell } from './spell.js';

export const MAX_K6_VUS = 10_000;

/** k6's constant-arrival-rate takes a whole `rate` per `timeUnit`: the smallest time unit that makes it whole. */
function arrivalRate(perSecond: number, spell: Spell): { rate: number; timeUnit: string } {
  for (const seconds of [1, 2, 4, 5, 10, 20, 25, 50, 100, 1000]) {
    const rate = perSecond * seconds;
    if (Math.abs(rate - Math.round(rate)) < 1e-9 && Math.round(rate) >= 1)
      return { rate: Math.round(rate), timeUnit: `${seconds}s` };
  }
  throw new InputError(
    `${spell('rps')}: ${spell('num_clients')} × ${spell('rps')} = ${perSecond} ` +
      `requests/s cannot be written as whole requests per 1–1000 s for ` +
      `k6; round ${spell('rps')}`,
  );
}

export interface K6Load {
  clients: number;
  rps: number;
  durationMs: number;
  timeoutMs: number;
}

/**
 * The load's constant-arrival-rate scenario. k6 adds VUs as iterations fall due while others are
 * in flight, as faultline opens connections: enough VUs for every request to wait its full
 * timeout keeps k6 open-loop. This deliberately differs from faultline's own default of at most
 * 1,000 connections (load/options.ts), which bounds the sockets one process and its in-process
 * proxy hold; a k6 VU is cheap and the cloud run has no in-process proxy.
 */
export function k6LoadScenario(
  load: K6Load,
  notes: string[],
  spell: Spell = asGiven,
): Record<string, unknown> & { rate: number } {
  const perSecond = load.clients * load.rps;
  const { rate, timeUnit } = arrivalRate(perSecond, spell);
  const needed = Math.max(load.clients, Math.ceil(perSecond * (load.timeoutMs / 1000)));
  const maxVUs = Math.min(needed, MAX_K6_VUS);
  if (needed > MAX_K6_VUS)
    notes.push(
      `maxVUs capped at ${MAX_K6_VUS} (rate × timeout asks ${needed}); ` +
        `k6 drops iterations (dropped_iterations) when every VU is busy.`,
    );
  return {
    executor: 'constant-arrival-rate',
    rate,
    timeUnit,
    duration: goDuration(load.durationMs),
    preAllocatedVUs: load.clients,
    maxVUs,
  };
}

/** An SLO as k6 writes it: the metric it is on and the threshold expression. */
export function k6Threshold(slo: Slo): { metric: 'http_req_duration' | 'http_req_failed'; expression: string } {
  if (slo.type === 'latency')
    return { metric: 'http_req_duration', expression: `p(${slo.objective})${slo.op ?? '<='}${slo.threshold}` };
  return { metric: 'http_req_failed', expression: `rate${slo.op ?? '<'}${Number((slo.threshold / 100).toFixed(6))}` };
}

/** The note every k6 export carries: where its durations start. */
export const K6_DURATION_NOTE =
  "k6's http_req_duration runs from the request's send; faultline " +
  "measures from the intended start, so under queueing faultline's " +
  'percentiles can be higher.';
