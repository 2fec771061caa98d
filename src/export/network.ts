/**
 * A network fault as the network engines (FIS's ECS/EKS actions, Chaos Mesh's NetworkChaos) take
 * it, or a refusal: the one reading of a fault for every export (a scenario's, an experiment
 * step's). A setting the user chose is kept or refused; a setting left unset takes the engine's
 * meaning and a note says so — so a fault with every default exports, and nothing the user asked
 * for is approximated.
 */
import type { FaultSpec } from '../proxy/index.js';
import { refuse, type Spell } from './spell.js';

export type NetworkFault =
  | { kind: 'latency'; delay: number; jitter: number }
  | { kind: 'loss'; percent: number }
  | { kind: 'bandwidth'; bytesPerSecond: number }
  /** Which traffic is dropped: both ways (the default, as tc, FIS and Chaos Mesh), or one half. */
  | { kind: 'blackhole'; half: Half };

export type Engine = 'fis' | 'chaos-mesh';
export type Half = 'responses' | 'requests' | 'both';

/** Which half of the exchange the fault acts on: responses (the default), requests, or both. */
function affected(given: FaultSpec): Half {
  const { type, side, direction: written } = given as { type: string; side?: string; direction?: string };
  // A blackhole drops both ways unless told otherwise (src/proxy/faults/blackhole.ts).
  const direction = written ?? (type === 'blackhole' ? 'both' : 'ingress');
  if (direction === 'both') return 'both';
  const server = (side ?? 'server') === 'server';
  const ingress = (direction ?? 'ingress') === 'ingress';
  return server === ingress ? 'responses' : 'requests';
}

function wholeNumber(value: number, argument: string, to: Engine, unit: string, spell: Spell): number {
  if (!Number.isInteger(value))
    refuse(
      spell,
      argument,
      to,
      `${value} ${unit} is not a whole number, which is all the engine takes; give a whole number`,
    );
  return value;
}

export function networkFault(given: FaultSpec, to: Engine, spell: Spell, notes: string[]): NetworkFault {
  const fault = given as unknown as Record<string, unknown> & { type: string };
  const half = affected(given);
  if (fault.type !== 'blackhole' && half !== 'responses') {
    refuse(
      spell,
      'direction',
      to,
      `the fault acts on the ` +
        `${half === 'both' ? 'requests and the responses' : 'requests'}; ` +
        `the exported fault acts on the service's outbound traffic (its ` +
        `responses) only — use the default ${spell('side')} server, ${spell('direction')} ` +
        `ingress`,
    );
  }
  switch (fault.type) {
    case 'latency': {
      const deviation = Number(fault.deviationMs ?? 0);
      const chosen = fault.distribution as string | undefined;
      if (deviation > 0 && chosen !== undefined && chosen !== 'uniform') {
        refuse(
          spell,
          'distribution',
          to,
          `a ${chosen} spread of ${deviation} ms has no equivalent: the ` +
            `engine's jitter is netem's uniform spread (latency ± jitter); ` +
            `use ${spell('distribution')} uniform, or ${spell('deviation')} 0`,
        );
      }
      if (deviation > 0 && chosen === undefined) {
        notes.push(
          `${spell('distribution')} was not given: the deviation is ` +
            `exported as the engine's uniform spread (latency ± ${deviation} ` +
            `ms); faultline's own runs draw a normal one unless told uniform.`,
        );
      }
      if (fault.perOp === true)
        refuse(
          spell,
          'per_read_write_op',
          to,
          'a delay per read/write chunk has no equivalent; the engine delays packets',
        );
      return {
        kind: 'latency',
        delay: wholeNumber(Number(fault.latencyMs ?? 100), 'latency', to, 'ms', spell),
        jitter: wholeNumber(deviation, 'deviation', to, 'ms', spell),
      };
    }
    case 'packet_loss':
      if ((fault.model ?? 'bernoulli') !== 'bernoulli')
        refuse(
          spell,
          'model',
          to,
          `the ${String(fault.model)} loss model has no equivalent; the engine drops packets independently (bernoulli)`,
        );
      if (fault.rttMs !== undefined)
        notes.push(
          `${spell('rtt')} shapes only faultline's simulated recovery; the ` +
            `engine drops real packets, and TCP recovers at the real ` +
            `round-trip time.`,
        );
      return { kind: 'loss', percent: Math.round(Number(fault.lossRate ?? 0.05) * 100 * 1e6) / 1e6 };
    case 'bandwidth':
      if (to === 'fis')
        refuse(
          spell,
          'fault',
          to,
          'FIS has no bandwidth-limiting action (a bandwidth scenario exports to chaos-mesh or k6)',
        );
      if (fault.scope === 'connection') {
        refuse(
          spell,
          'bandwidth_scope',
          to,
          `a cap per connection has no equivalent: Chaos Mesh's bandwidth ` +
            `action caps the pods' whole traffic — use ${spell('bandwidth_scope')} ` +
            `shared, or leave it out`,
        );
      }
      if (fault.scope === undefined)
        notes.push(
          `${spell('bandwidth_scope')} was not given: the cap is exported ` +
            `as Chaos Mesh's, one cap on the pods' whole traffic (faultline's ` +
            `own runs cap each connection unless told shared).`,
        );
      return {
        kind: 'bandwidth',
        bytesPerSecond: wholeNumber(Number(fault.bytesPerSecond), 'rate', to, 'bytes/s', spell),
      };
    case 'blackhole':
      if (to === 'fis' && half === 'responses')
        refuse(
          spell,
          'direction',
          to,
          'the blackhole holds only the answers, while the requests still ' +
            "reach the service; FIS's blackhole-port drops a port's inbound " +
            'traffic (nothing reaches the service, nothing is answered) — use ' +
            "the blackhole's default, both ways",
        );
      return { kind: 'blackhole', half };
    case 'jitter':
      refuse(
        spell,
        'fault',
        to,
        `faultline's jitter adds one delay, drawn between 0 and the ` +
          `amplitude and redrawn a few times a second, to all traffic; the ` +
          `engine's jitter varies each packet's delay around a mean — no ` +
          `equivalent (export a latency fault with ${spell('deviation')} ` +
          `and ${spell('distribution')} uniform instead)`,
      );
    // falls through: refuse() never returns
    default:
      refuse(spell, 'fault', to, `the ${fault.type} fault has no equivalent on ${to}`);
  }
}
