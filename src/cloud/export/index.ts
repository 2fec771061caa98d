/**
 * One faultline scenario, on an engine beyond one machine (a thin front-end on src/export, which
 * builds the engines' objects for the experiment exports too):
 * - fis (fis.ts): a CreateExperimentTemplate input with the ECS or EKS network action of the same
 *   fault and numbers (a wait action first when the fault starts later than the load);
 * - chaos-mesh (chaos-mesh.ts): a NetworkChaos manifest (delay with jitter, loss, bandwidth, partition);
 * - k6 (k6.ts): a script whose constant-arrival-rate scenario reproduces the load (rate, duration,
 *   timeout) and whose thresholds are the scenario's SLOs.
 *
 * Only what the engine cannot do with the same meaning is refused, with the reason, naming the
 * argument as the caller spells it (ExportOptions.spell); nothing the user chose is approximated.
 * A setting left at its default takes the engine's meaning, and a note says so (src/export/network.ts),
 * so every engine takes every fault it has with the defaults. What the engine does differently but
 * explicitly (queue sizes, where the fault sits) is listed in `notes`. Only the scenario's stable
 * fields are read: the fault and its parameters, url, method, body, headers, duration, rate
 * (num_clients × rps), timeout, fault window and SLOs.
 */
import { InputError } from '../../kernel/errors.js';
import type { ScenarioSpec } from '../../scenario/index.js';
import { argumentNames } from '../../proxy/faults/declaration.js';
import { NETWORK_FAULTS } from '../../proxy/faults/declarations.js';
import { EXPORT_TARGETS } from '../export-targets.js';
import { asGiven, refuse, type ExportOptions, type ExportResult, type ExportTarget } from './context.js';
import { exportFis } from './fis.js';
import { exportChaosMesh } from './chaos-mesh.js';
import { exportK6 } from './k6.js';

export type { ExportOptions, ExportTarget } from './context.js';

export async function exportScenario(
  spec: ScenarioSpec,
  to: ExportTarget,
  options: ExportOptions = {},
): Promise<ExportResult> {
  if (spec.proxies.length > 0) {
    refuse(
      options.spell ?? asGiven,
      'proxies',
      to,
      "the fault is on the app's outbound calls through proxy mappings; " +
        'exports describe a fault on the service at url — export without ' +
        'proxies',
    );
  }
  switch (to) {
    case 'fis':
      return exportFis(spec, options);
    case 'chaos-mesh':
      return exportChaosMesh(spec, options);
    case 'k6':
      return exportK6(spec, options);
    default:
      throw new InputError(`to: "${String(to)}" is not one of ${EXPORT_TARGETS.join(', ')}`);
  }
}

/**
 * The fault arguments fault_export_scenario takes, by fault: each network fault's declared
 * arguments (src/proxy/faults/*.declaration.ts); another fault's argument is a mistake, not a
 * default. (`faultline export` takes every fault flag of `faultline run`.)
 */
const EXPORT_FAULT_ARGUMENTS: Readonly<Record<string, readonly string[]>> = Object.fromEntries(
  NETWORK_FAULTS.map((fault) => [fault.type, argumentNames(fault)]),
);

/** Refuses an argument of another fault (`loss_rate` on a latency export); `spell` names it as the caller wrote it. */
export function checkFaultArguments(
  fault: string,
  given: Record<string, unknown>,
  spell: (name: string) => string = asGiven,
): void {
  const own = new Set(EXPORT_FAULT_ARGUMENTS[fault] ?? []);
  for (const [other, names] of Object.entries(EXPORT_FAULT_ARGUMENTS)) {
    if (other === fault) continue;
    const stray = names.find((name) => !own.has(name) && given[name] !== undefined);
    if (stray) {
      const accepted = [...own].map(spell).join(', ') || 'none of its own';
      throw new InputError(`${spell(stray)}: applies to ${other} scenarios; a ${fault} scenario takes ${accepted}`);
    }
  }
}

/**
 * Scenario limits for exports: nothing is loaded, so any host, any rate and any length pass the
 * scenario's own checks; each engine refuses what it cannot run (FIS: 12 hours at most).
 */
export const EXPORT_LIMITS = {
  allowRemoteTargets: true,
  maxDurationMs: Number.MAX_SAFE_INTEGER,
  maxRatePerSecond: Number.MAX_SAFE_INTEGER,
};
