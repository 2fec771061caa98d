/**
 * A scenario as a Chaos Mesh NetworkChaos manifest: delay with jitter, loss, bandwidth (one cap on
 * the pods' traffic) or a partition, on the pods the selector names, for the fault's length.
 */
import { ToolInputError } from '../../errors.js';
import type { ScenarioSpec } from '../../scenario/index.js';
import { asGiven, type ExportOptions, type ExportResult } from './context.js';
import { networkFault } from './network-fault.js';

export function goDuration(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${Math.round(ms)}ms`;
}

function labels(
  selector: readonly string[] | undefined,
  name: string,
): { labels: Record<string, string>; placeholder: boolean } {
  if (!selector || selector.length === 0) return { labels: { app: 'REPLACE_WITH_APP_LABEL' }, placeholder: true };
  const out: Record<string, string> = {};
  selector.forEach((entry, index) => {
    const match = /^([A-Za-z0-9][-A-Za-z0-9_./]*)=([-A-Za-z0-9_.]*)$/.exec(entry.trim());
    if (!match) throw new ToolInputError(`${name}[${index}]: "${entry}" is not a label selector key=value`);
    out[match[1]!] = match[2]!;
  });
  return { labels: out, placeholder: false };
}

export async function exportChaosMesh(spec: ScenarioSpec, options: ExportOptions): Promise<ExportResult> {
  const spell = options.spell ?? asGiven;
  const notes: string[] = [];
  const fault = networkFault(spec, 'chaos-mesh', spell, notes);
  const namespace = options.namespace ?? 'default';
  if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(namespace))
    throw new ToolInputError(`${spell('namespace')}: "${namespace}" is not a Kubernetes namespace name`);
  const selected = labels(options.selector, spell('selector'));
  if (selected.placeholder)
    notes.push(
      `The pods are selected by a placeholder label app=REPLACE_WITH_APP_LABEL: give ${spell('selector')} key=value.`,
    );
  const specBody: Record<string, unknown> = {
    selector: { namespaces: [namespace], labelSelectors: selected.labels },
    mode: 'all',
  };
  switch (fault.kind) {
    case 'latency':
      Object.assign(specBody, {
        action: 'delay',
        direction: 'to',
        delay: { latency: `${fault.delay}ms`, jitter: `${fault.jitter}ms`, correlation: '0' },
      });
      break;
    case 'loss':
      Object.assign(specBody, {
        action: 'loss',
        direction: 'to',
        loss: { loss: String(fault.percent), correlation: '0' },
      });
      break;
    case 'bandwidth': {
      // tbf's queue (limit) and bucket (buffer) have no faultline counterpart: faultline holds
      // no burst and pauses the sender instead of queueing. One second of data queued, one
      // full-size packet of burst is the closest reading; both are stated in the notes.
      const limit = Math.max(fault.bytesPerSecond, 1514);
      const buffer = 1514;
      Object.assign(specBody, {
        action: 'bandwidth',
        direction: 'to',
        bandwidth: { rate: `${fault.bytesPerSecond}bps`, limit, buffer },
      });
      notes.push(
        `rate is ${fault.bytesPerSecond} bytes/s (Chaos Mesh's "bps" is bytes per second, as faultline's). limit ${limit} bytes (one second queued) and buffer ${buffer} bytes (one packet of burst) are Chaos Mesh settings faultline has no equivalent for: faultline holds no burst and pauses the sender instead of queueing.`,
      );
      break;
    }
    case 'blackhole':
      Object.assign(specBody, { action: 'partition', direction: 'both' });
      notes.push(
        "No spec.target is set: add spec.target (the client pods) or spec.externalTargets to limit the partition to the clients, and check your Chaos Mesh version's partition semantics for a missing target.",
      );
      break;
  }
  specBody.duration = goDuration(spec.faultEndMs - spec.faultStartMs);
  if (fault.kind !== 'blackhole')
    notes.push(
      'direction "to" acts on the selected pods\' outbound traffic, their responses: faultline\'s default (side server, direction ingress).',
    );
  if (spec.faultStartMs > 0)
    notes.push(
      `Apply the manifest ${goDuration(spec.faultStartMs)} after the load starts (faultline's ${spell('fault_start')}); it removes itself after ${specBody.duration as string}.`,
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
