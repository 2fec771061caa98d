/**
 * A scenario as a Chaos Mesh NetworkChaos manifest: delay with jitter, loss, bandwidth (one cap on
 * the pods' traffic) or a partition, on the pods the selector names, for the fault's length. The
 * objects are src/export's; this front-end adds the manifest around them and the scenario's notes.
 */
import type { ScenarioSpec } from '../../scenario/index.js';
import { checkNamespace, goDuration, labelSelectors, networkChaosAction } from '../../export/chaos-mesh.js';
import { networkFault } from '../../export/network.js';
import { asGiven, type ExportOptions, type ExportResult } from './context.js';

export async function exportChaosMesh(spec: ScenarioSpec, options: ExportOptions): Promise<ExportResult> {
  const spell = options.spell ?? asGiven;
  const notes: string[] = [];
  const fault = networkFault(spec.fault, 'chaos-mesh', spell, notes);
  const namespace = checkNamespace(options.namespace ?? 'default', spell('namespace'));
  const placeholder = !options.selector || options.selector.length === 0;
  const labels = placeholder ? { app: 'REPLACE_WITH_APP_LABEL' } : labelSelectors(options.selector!, spell('selector'));
  if (placeholder)
    notes.push(
      `The pods are selected by a placeholder label app=REPLACE_WITH_APP_LABEL: give ${spell('selector')} key=value.`,
    );
  const specBody: Record<string, unknown> = {
    selector: { namespaces: [namespace], labelSelectors: labels },
    mode: 'all',
    ...networkChaosAction(fault, notes),
    duration: goDuration(spec.faultEndMs - spec.faultStartMs),
  };
  if (spec.faultStartMs > 0)
    notes.push(
      `Apply the manifest ${goDuration(spec.faultStartMs)} after the ` +
        `load starts (faultline's ${spell('fault_start')}); it removes ` +
        `itself after ${specBody.duration as string}.`,
    );
  const manifest = {
    apiVersion: 'chaos-mesh.org/v1alpha1',
    kind: 'NetworkChaos',
    metadata: { name: `faultline-${spec.fault.type.replace('_', '-')}`, namespace },
    spec: specBody,
  };
  const { stringify } = await import('yaml');
  return { to: 'chaos-mesh', fault: spec.fault.type, format: 'yaml', document: stringify(manifest), notes };
}
