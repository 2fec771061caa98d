/**
 * A scenario's load as a k6 script: a constant-arrival-rate scenario with the same rate
 * (num_clients × rps), duration and timeout, and thresholds from its SLOs. The fault is left to
 * the fis or chaos-mesh export.
 */
import { ToolInputError } from '../../errors.js';
import type { ScenarioSpec } from '../../scenario/index.js';
import { asGiven, type ExportOptions, type ExportResult, type Spell } from './context.js';
import { goDuration } from './chaos-mesh.js';

export const MAX_K6_VUS = 10_000;

/** k6's constant-arrival-rate takes a whole `rate` per `timeUnit`: the smallest time unit that makes it whole. */
function arrivalRate(perSecond: number, spell: Spell): { rate: number; timeUnit: string } {
  for (const seconds of [1, 2, 4, 5, 10, 20, 25, 50, 100, 1000]) {
    const rate = perSecond * seconds;
    if (Math.abs(rate - Math.round(rate)) < 1e-9 && Math.round(rate) >= 1)
      return { rate: Math.round(rate), timeUnit: `${seconds}s` };
  }
  throw new ToolInputError(
    `${spell('rps')}: ${spell('num_clients')} × ${spell('rps')} = ${perSecond} requests/s cannot be written as whole requests per 1–1000 s for k6; round ${spell('rps')}`,
  );
}

export function exportK6(spec: ScenarioSpec, options: ExportOptions): ExportResult {
  const spell = options.spell ?? asGiven;
  const perSecond = spec.clients * spec.rps;
  const { rate, timeUnit } = arrivalRate(perSecond, spell);
  const notes: string[] = [];
  // k6's constant-arrival-rate adds VUs as iterations fall due while others are in flight, as
  // faultline opens connections. Enough VUs for every request to wait its full timeout keeps k6
  // open-loop. This deliberately differs from faultline's own default of at most 1,000
  // connections (load/options.ts DEFAULT_MAX_CONNECTIONS), which bounds the sockets one process
  // and its in-process proxy hold; a k6 VU is cheap and the cloud run has no in-process proxy.
  const needed = Math.max(spec.clients, Math.ceil(perSecond * (spec.timeoutMs / 1000)));
  const maxVUs = Math.min(needed, MAX_K6_VUS);
  if (needed > MAX_K6_VUS)
    notes.push(
      `maxVUs capped at ${MAX_K6_VUS} (rate × timeout asks ${needed}); k6 drops iterations (dropped_iterations) when every VU is busy.`,
    );
  const thresholds: Record<string, string[]> = {};
  for (const slo of spec.slos) {
    if (slo.type === 'latency') (thresholds.http_req_duration ??= []).push(`p(${slo.objective})<=${slo.threshold}`);
    else (thresholds.http_req_failed ??= []).push(`rate<${Number((slo.threshold / 100).toFixed(6))}`);
  }
  const headers = { ...spec.headers };
  if (spec.body !== '' && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
    headers['Content-Type'] = 'application/json';
  const scenarioOptions = {
    scenarios: {
      faultline: {
        executor: 'constant-arrival-rate',
        rate,
        timeUnit,
        duration: goDuration(spec.durationMs),
        preAllocatedVUs: spec.clients,
        maxVUs,
      },
    },
    thresholds,
  };
  const params = { timeout: goDuration(spec.timeoutMs), headers };
  const document = [
    `// k6 load from a faultline ${spec.fault.type} scenario: ${perSecond} requests/s for ${goDuration(spec.durationMs)}, timeout ${goDuration(spec.timeoutMs)}.`,
    "// Thresholds are the scenario's SLOs. Inject the fault separately (the fis or chaos-mesh export).",
    "import http from 'k6/http';",
    '',
    `export const options = ${JSON.stringify(scenarioOptions, null, 2)};`,
    '',
    `const params = ${JSON.stringify(params, null, 2)};`,
    '',
    'export default function () {',
    `  http.request(${JSON.stringify(spec.method)}, ${JSON.stringify(spec.url)}, ${spec.body === '' ? 'null' : JSON.stringify(spec.body)}, params);`,
    '}',
    '',
  ].join('\n');
  notes.push(
    "k6's http_req_duration runs from the request's send; faultline measures from the intended start, so under queueing faultline's percentiles can be higher.",
  );
  if (!spec.rejectUnauthorized) notes.push('insecure_tls: run k6 with --insecure-skip-tls-verify.');
  return { to: 'k6', fault: spec.fault.type, format: 'javascript', document, notes };
}
