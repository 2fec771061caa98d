/**
 * A scenario's load as a k6 script: a constant-arrival-rate scenario with the same rate
 * (num_clients × rps), duration and timeout, and thresholds from its SLOs (src/export/k6.ts builds
 * both). The fault is left to the fis or chaos-mesh export.
 */
import type { ScenarioSpec } from '../../scenario/index.js';
import { goDuration } from '../../export/chaos-mesh.js';
import { K6_DURATION_NOTE, k6LoadScenario, k6Threshold } from '../../export/k6.js';
import { asGiven, type ExportOptions, type ExportResult } from './context.js';

export function exportK6(spec: ScenarioSpec, options: ExportOptions): ExportResult {
  const spell = options.spell ?? asGiven;
  const perSecond = spec.clients * spec.rps;
  const notes: string[] = [];
  const scenario = k6LoadScenario(spec, notes, spell);
  // A fault window shorter than the run is judged over the requests due in it (scenario/run.ts), as the
  // experiment's export does: its requests are tagged fault:in and the thresholds are on that sub-metric.
  const partial = spec.faultStartMs > 0 || spec.faultEndMs < spec.durationMs;
  const thresholds: Record<string, string[]> = {};
  for (const slo of spec.slos) {
    const { metric, expression } = k6Threshold(slo);
    (thresholds[partial ? `${metric}{fault:in}` : metric] ??= []).push(expression);
  }
  const headers = { ...spec.headers };
  if (spec.body !== '' && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
    headers['Content-Type'] = 'application/json';
  const scenarioOptions = { scenarios: { faultline: scenario }, thresholds };
  const params = { timeout: goDuration(spec.timeoutMs), headers };
  const document = [
    `// k6 load from a faultline ${spec.fault.type} scenario: ${perSecond} ` +
      `requests/s for ${goDuration(spec.durationMs)}, timeout ` +
      `${goDuration(spec.timeoutMs)}.`,
    partial
      ? `// Thresholds are the scenario's SLOs over the requests due in its fault window ` +
        `(${spec.faultStartMs}ms to ${spec.faultEndMs}ms, tagged fault:in). ` +
        'Inject the fault separately (the fis or chaos-mesh export).'
      : "// Thresholds are the scenario's SLOs. Inject the fault separately (the fis or chaos-mesh export).",
    "import http from 'k6/http';",
    ...(partial ? ["import exec from 'k6/execution';"] : []),
    '',
    `export const options = ${JSON.stringify(scenarioOptions, null, 2)};`,
    '',
    `const params = ${JSON.stringify(params, null, 2)};`,
    '',
    'export default function () {',
    ...(partial
      ? [
          '  const t = Date.now() - exec.scenario.startTime;',
          `  const inFault = t >= ${spec.faultStartMs} && t < ${spec.faultEndMs};`,
        ]
      : []),
    `  http.request(${JSON.stringify(spec.method)}, ` +
      `${JSON.stringify(spec.url)}, ` +
      `${spec.body === '' ? 'null' : JSON.stringify(spec.body)}, ` +
      `${partial ? "inFault ? Object.assign({}, params, { tags: { fault: 'in' } }) : params" : 'params'});`,
    '}',
    '',
  ].join('\n');
  notes.push(K6_DURATION_NOTE);
  if (!spec.rejectUnauthorized) notes.push('insecure_tls: run k6 with --insecure-skip-tls-verify.');
  return { to: 'k6', fault: spec.fault.type, format: 'javascript', document, notes };
}
