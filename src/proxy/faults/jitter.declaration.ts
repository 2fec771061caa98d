/** jitter's declaration (see declaration.ts): its fields, their spellings, and when it acted. */
import type { FaultCounters } from './fault.js';
import type { ResolvedJitter } from './jitter.js';
import { MILLISECONDS, type FaultDeclaration } from './declaration.js';

export const JITTER = {
  type: 'jitter',
  plane: 'network',
  help: 'an extra delay drawn uniformly in [0, amplitude], redrawn frequency times a second',
  scenario: 'adds a varying delay in [0, amplitude], redrawn frequency times a second',
  proxyFlag: { name: 'jitter-amplitude', help: 'add jitter: extra delay drawn uniformly in [0, ms]' },
  fields: [
    {
      key: 'amplitudeMs',
      kind: 'number',
      unit: 'ms',
      required: true,
      ...MILLISECONDS,
      help: 'largest extra delay',
      flag: 'jitter-amplitude',
      argument: {
        name: 'amplitude',
        default: 20,
        help: 'Largest delay in ms; each chunk gets [0, amplitude] (default 20)',
      },
    },
    {
      key: 'frequencyHz',
      kind: 'number',
      unit: 'Hz',
      above: 0,
      max: 1000,
      default: 5,
      expected: 'a number of redraws per second, > 0 and ≤ 1000',
      help: 'times per second the delay is redrawn',
      flag: 'jitter-frequency',
      argument: { name: 'frequency', default: 5, min: 0, help: 'Redraws per second, Hz (default 5)' },
    },
  ],
  // An amplitude of 0 acts on every chunk and changes nothing.
  counts: 'delay',
  acted: (counters) => counters.applications > 0 && counters.delayAddedMs > 0,
  // fault's spelling "Frequence" is kept: scripts may match on it.
  describe: (spec, scope) =>
    `Jitter: ${scope}Amplitude: ${spec.amplitudeMs.toFixed(2)}ms, Frequence ${spec.frequencyHz.toFixed(2)}Hz`,
  inert: (spec) =>
    spec.amplitudeMs === 0
      ? 'the jitter fault adds nothing (amplitude 0 ms): the run measured ' +
        'the endpoint without a fault; give amplitude above 0.'
      : undefined,
} as const satisfies FaultDeclaration<FaultCounters, ResolvedJitter>;
