/**
 * Chaos Mesh's objects, built once for every export (a scenario's NetworkChaos manifest, an
 * experiment's Workflow nodes): Go durations, the namespace rule, label selectors and a network
 * fault's NetworkChaos action, with the notes that pin its meaning down.
 */
import { InputError } from '../kernel/errors.js';
import type { NetworkFault } from './network.js';

/** A Go duration (`10s`, `1500ms`), as Chaos Mesh and k6 take them. */
export function goDuration(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${Math.round(ms)}ms`;
}

/** Kubernetes' namespace rule (RFC 1123 label); `argument` names where it was given. */
export function checkNamespace(namespace: string, argument: string): string {
  if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(namespace))
    throw new InputError(`${argument}: "${namespace}" is not a Kubernetes namespace name`);
  return namespace;
}

/** `key=value` label selectors as an object; `name` names the argument in a refusal. */
export function labelSelectors(selector: readonly string[], name: string): Record<string, string> {
  const out: Record<string, string> = {};
  selector.forEach((entry, index) => {
    const match = /^([A-Za-z0-9][-A-Za-z0-9_./]*)=([-A-Za-z0-9_.]*)$/.exec(entry.trim());
    if (!match) throw new InputError(`${name}[${index}]: "${entry}" is not a label selector key=value`);
    out[match[1]!] = match[2]!;
  });
  return out;
}

/**
 * The NetworkChaos fields of a fault on the selected pods (the dependency's): action, direction
 * and the action's own block. Delay, loss and bandwidth act on the pods' outbound traffic (their
 * responses, faultline's default); a blackhole is a partition in the fault's directions.
 */
export function networkChaosAction(fault: NetworkFault, notes: string[]): Record<string, unknown> {
  switch (fault.kind) {
    case 'latency':
      notes.push(DIRECTION_TO);
      return {
        action: 'delay',
        direction: 'to',
        delay: { latency: `${fault.delay}ms`, jitter: `${fault.jitter}ms`, correlation: '0' },
      };
    case 'loss':
      notes.push(DIRECTION_TO);
      return { action: 'loss', direction: 'to', loss: { loss: String(fault.percent), correlation: '0' } };
    case 'bandwidth': {
      // tbf's queue (limit) and bucket (buffer) have no faultline counterpart: faultline holds
      // no burst and pauses the sender instead of queueing. One second of data queued, one
      // full-size packet of burst is the closest reading; both are stated in the notes.
      const limit = Math.max(fault.bytesPerSecond, 1514);
      const buffer = 1514;
      notes.push(
        `rate is ${fault.bytesPerSecond} bytes/s (Chaos Mesh's "bps" is ` +
          `bytes per second, as faultline's). limit ${limit} bytes (one ` +
          `second queued) and buffer ${buffer} bytes (one packet of burst) ` +
          `are Chaos Mesh settings faultline has no equivalent for: ` +
          `faultline holds no burst and pauses the sender instead of ` +
          `queueing.`,
        DIRECTION_TO,
      );
      return { action: 'bandwidth', direction: 'to', bandwidth: { rate: `${fault.bytesPerSecond}bps`, limit, buffer } };
    }
    case 'blackhole': {
      // Partition directions are seen from the selected pods: "to" their packets out (the
      // answers), "from" the packets to them (the requests).
      const direction = fault.half === 'both' ? 'both' : fault.half === 'requests' ? 'from' : 'to';
      notes.push(
        fault.half === 'both'
          ? 'No spec.target is set: add spec.target (the client pods) or ' +
              'spec.externalTargets to limit the partition to the clients, and ' +
              "check your Chaos Mesh version's partition semantics for a " +
              'missing target.'
          : `The partition drops only the ${fault.half} (direction ` +
              `${direction}, as the blackhole's); add spec.target (the client ` +
              `pods) or spec.externalTargets, which a one-way partition needs.`,
      );
      return { action: 'partition', direction };
    }
  }
}

const DIRECTION_TO =
  'direction "to" acts on the selected pods\' outbound traffic, ' +
  "their responses: faultline's default (side server, direction " +
  'ingress).';
