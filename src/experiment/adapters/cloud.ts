/**
 * The cloud plane: src/cloud's exports of one scenario (the same fault, the same numbers, or a
 * refusal with the reason) and its FIS template builder, seen as the experiment exporters need
 * them — one network fault on one dependency at a time. A step is handed over as the one-fault
 * scenario it is: the fault on the dependency's address for the step's length.
 */
import { buildExperimentTemplate, exportScenario, type BuiltTemplate, type ExportOptions } from '../../cloud/index.js';
import type { ScenarioSpec } from '../../scenario/index.js';
import type { FaultSpec } from '../../proxy/index.js';
import type { LoadPlan } from '../model.js';

export type { BuiltTemplate };

/** A one-fault scenario for the exports: `fault` on the service at host:port, from 0 for `forMs`, with `load`'s numbers when given. */
function scenarioOf(fault: FaultSpec, host: string, port: number, forMs: number, load?: LoadPlan): ScenarioSpec {
  return {
    url: load?.url ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}/`,
    method: load?.method ?? 'GET',
    body: load?.body ?? '',
    headers: load?.headers ?? {},
    durationMs: load?.durationMs ?? forMs,
    clients: load?.clients ?? 1,
    rps: load?.rps ?? 1,
    timeoutMs: load?.timeoutMs ?? 10_000,
    maxConnections: load?.maxConnections ?? 1,
    expectStatus: load?.expectStatus ?? '2xx,3xx',
    expectedStatus: load?.expectedStatus as ScenarioSpec['expectedStatus'],
    maxRatePerSecond: Number.MAX_SAFE_INTEGER,
    proxies: [],
    fault,
    faultStartMs: 0,
    faultEndMs: forMs,
    slos: [],
    baseline: false,
    seed: undefined,
    strategy: 'load',
    rejectUnauthorized: load?.rejectUnauthorized ?? true,
    targets: { allowRemoteTargets: true },
  };
}

/** The NetworkChaos spec (and notes) src/cloud writes for this network fault on the dependency's pods. */
export async function networkChaosSpec(
  fault: FaultSpec,
  host: string,
  port: number,
  forMs: number,
  options: ExportOptions,
): Promise<{ spec: Record<string, unknown>; notes: string[] }> {
  const result = await exportScenario(scenarioOf(fault, host, port, forMs), 'chaos-mesh', options);
  const { parse } = await import('yaml');
  const manifest = parse(result.document) as { spec: Record<string, unknown> };
  return { spec: manifest.spec, notes: result.notes };
}

/** The FIS action (id and parameters, duration included) src/cloud writes for this network fault. */
export async function fisAction(
  fault: FaultSpec,
  host: string,
  port: number,
  forMs: number,
  platform: ExportOptions['platform'],
): Promise<{ actionId: string; parameters: Record<string, string>; notes: string[] }> {
  const result = await exportScenario(scenarioOf(fault, host, port, forMs), 'fis', {
    ...(platform ? { platform } : {}),
  });
  const template = JSON.parse(result.document) as {
    actions: Record<string, { actionId: string; parameters?: Record<string, string> }>;
  };
  const action = template.actions['fault']!;
  return {
    actionId: action.actionId,
    parameters: action.parameters ?? {},
    notes: result.notes.filter((note) => /jitter|blackhole/i.test(note)),
  };
}

/** k6's scenario block for the load (rate, time unit, VUs) as src/cloud writes it, with its notes. */
export async function k6LoadOptions(load: LoadPlan): Promise<{ scenario: Record<string, unknown>; notes: string[] }> {
  const result = await exportScenario(
    scenarioOf({ type: 'latency', latencyMs: 0 } as FaultSpec, '127.0.0.1', 80, load.durationMs, load),
    'k6',
  );
  const options = /export const options = (\{[\s\S]*?\n\});/.exec(result.document);
  if (!options) throw new Error('the k6 export changed shape: no options object found');
  const parsed = JSON.parse(options[1]!) as { scenarios: Record<string, Record<string, unknown>> };
  return { scenario: Object.values(parsed.scenarios)[0]!, notes: result.notes };
}

export function buildTemplate(
  recommendations: Array<Record<string, unknown>>,
  targetConfig: Record<string, unknown>,
): BuiltTemplate {
  return buildExperimentTemplate(recommendations, targetConfig);
}
