/**
 * A scenario's open-loop phases as experiments for the experiment runner (src/experiment/runner.ts):
 * the baseline is an experiment with no step, the load only; the fault phase has one fault step per
 * mapping the fault acts on (the proxy in front of the url, or each of `proxies`), from faultStart
 * to faultEnd. Without `proxies` the load goes through that proxy in front (`front`), warmed before
 * its clock starts, so both phases measure the same path.
 */
import { IN_FRONT_MAPPING, type Experiment, type FaultStep } from '../experiment/model.js';
import { mappingInFrontOf, parseMapping } from '../proxy/mapping.js';
import type { ScenarioSpec } from './input.js';

export function compileScenario(spec: ScenarioSpec, phase: 'baseline' | 'fault', seed: number): Experiment {
  const { durationMs } = spec;
  const fromMs = Math.min(Math.max(0, spec.faultStartMs), durationMs);
  const toMs = Math.min(spec.faultEndMs, durationMs);
  // A fault step names its mapping: an unnamed one gets a name no caller can write (with a space).
  const proxies = spec.proxies.map((mapping, index) => ({ ...mapping, name: mapping.name ?? `mapping ${index}` }));
  const targets = proxies.length === 0 ? [IN_FRONT_MAPPING] : proxies.map((mapping) => mapping.name);
  const config = spec.httpFault
    ? ({ kind: 'http', spec: spec.httpFault, type: spec.httpFault.type } as const)
    : ({ kind: 'network', spec: spec.fault, type: spec.fault.type } as const);
  const steps: FaultStep[] =
    phase === 'baseline'
      ? []
      : targets.map((target, index) => ({
          kind: 'fault',
          index,
          name: `${config.type} on #${target}`,
          atMs: fromMs,
          forMs: toMs - fromMs,
          placement: { plane: 'proxy', target },
          config,
          raw: { ...config.spec },
        }));
  const inject = phase === 'baseline' ? { fromMs: durationMs, toMs: durationMs } : { fromMs, toMs };
  return {
    title: `${phase} of ${spec.url}`,
    description: '',
    format: 'faultline',
    seed,
    load: spec,
    durationMs,
    proxies,
    // Named for its fault step, its text as the report shows it; it parses HTTP only for an HTTP fault (a
    // caller's mapping that says its protocol, redis:// or http://, does as in an experiment).
    ...(spec.proxies.length === 0
      ? {
          front: {
            mapping: { ...parseMapping(mappingInFrontOf(new URL(spec.url))), name: IN_FRONT_MAPPING },
            http: spec.httpFault !== undefined,
          },
        }
      : {}),
    control: [],
    steps,
    phases: {
      baseline: { label: 'baseline', fromMs: 0, toMs: inject.fromMs },
      inject: { label: 'inject', ...inject },
      recover: { label: 'recover', fromMs: inject.toMs, toMs: durationMs },
    },
    expectations: [],
    steadySlos: [],
    recoverWithinMs: undefined,
    abort: [],
    rollbacks: [],
    untimed: [],
    notChecked: [],
  };
}
