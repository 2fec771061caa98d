/** latency's declaration (see declaration.ts): its fields, their spellings, and when it acted. */
import type { FaultCounters } from './fault.js';
import type { ResolvedLatency } from './latency.js';
import { MILLISECONDS, type FaultDeclaration } from './declaration.js';

export const LATENCY_DISTRIBUTIONS = ['normal', 'uniform', 'pareto', 'pareto_normal'] as const;

export const LATENCY = {
  type: 'latency',
  plane: 'network',
  help: 'a delay once per message (default) or on every chunk, drawn from a distribution',
  scenario: 'adds latency (once per request/response, or per chunk)',
  proxyFlag: { name: 'latency', help: 'add latency: centre of the delay in ms' },
  // Toxiproxy's latency: each chunk delayed latency ± jitter, uniformly.
  toxic: { type: 'latency', fixed: { distribution: 'uniform', perOp: true } },
  fields: [
    {
      key: 'latencyMs',
      kind: 'number',
      unit: 'ms',
      required: true,
      ...MILLISECONDS,
      help: 'centre (mean) of the delay added',
      flag: 'latency',
      toxic: { attribute: 'latency' },
      fis: { parameter: 'delayMilliseconds' },
      argument: { name: 'latency', default: 100, help: 'Mean added delay in milliseconds (default 100)' },
    },
    {
      key: 'deviationMs',
      kind: 'number',
      unit: 'ms',
      default: 0,
      ...MILLISECONDS,
      help: "spread of the delay: the normal distribution's standard deviation, uniform's half-width",
      flag: 'latency-deviation',
      toxic: { attribute: 'jitter' },
      fis: { parameter: 'jitterMilliseconds' },
      argument: { name: 'deviation', default: 0, help: 'Standard deviation in milliseconds (default 0)' },
    },
    {
      key: 'perOp',
      kind: 'boolean',
      default: false,
      help: 'delay every chunk read, not once per message',
      flag: 'latency-per-op',
      argument: {
        name: 'per_read_write_op',
        default: false,
        help: 'Delay every chunk, not once per message (default false)',
      },
    },
    {
      key: 'distribution',
      kind: 'enum',
      values: LATENCY_DISTRIBUTIONS,
      default: 'normal',
      help: 'distribution of the delay',
      flag: 'latency-distribution',
      argument: { name: 'distribution', help: 'Default normal' },
    },
  ],
  // A delay of 0 ms (latency 0, deviation 0) acts on every message and changes nothing.
  counts: 'delay',
  acted: (counters) => counters.applications > 0 && counters.delayAddedMs > 0,
  describe: (spec, scope) =>
    `Latency: ${scope}, Per Read/Write Op.: ${spec.perOp}, Distribution: ${spec.distribution}, ` +
    `Mean: ${spec.latencyMs.toFixed(2)} ms, Stddev: ${spec.deviationMs.toFixed(2)} ms`,
  inert: (spec) =>
    spec.latencyMs === 0 && spec.deviationMs === 0
      ? 'the latency fault adds nothing (latency 0 ms, deviation 0 ms): ' +
        'the run measured the endpoint without a fault; give latency ' +
        'above 0.'
      : undefined,
} as const satisfies FaultDeclaration<FaultCounters, ResolvedLatency>;
