/** packet_loss's declaration (see declaration.ts): its fields, their spellings, and when it acted. */
import type { FaultCounters } from './fault.js';
import type { ResolvedPacketLoss } from './packet-loss.js';
import { PROBABILITY, type FaultDeclaration } from './declaration.js';

export const LOSS_MODELS = ['bernoulli', 'gilbert_elliott'] as const;

export const PACKET_LOSS = {
  type: 'packet_loss',
  plane: 'network',
  command: 'packet-loss',
  help: "virtual TCP segments lost by a seeded model, each stalling the stream for TCP's recovery time",
  scenario: 'loses TCP segments, stalling the stream for the retransmission time as real loss does',
  idle: 'no segment was lost (raise loss_rate or the traffic)',
  proxyFlag: {
    name: 'packet-loss',
    help: 'add packet loss: probability 0..1 that a virtual 1448-byte segment is lost (stalls the stream)',
  },
  fields: [
    {
      key: 'lossRate',
      kind: 'number',
      unit: 'probability',
      default: 0.05,
      ...PROBABILITY,
      help: 'fraction of virtual 1448-byte segments lost',
      flag: 'packet-loss',
      fis: { parameter: 'lossPercent', divisor: 100 },
      argument: {
        name: 'loss_rate',
        help: "Fraction of TCP segments lost (default 0.05); each stalls the stream for TCP's recovery",
      },
    },
    {
      key: 'model',
      kind: 'enum',
      values: LOSS_MODELS,
      default: 'bernoulli',
      help: 'loss model (gilbert_elliott is bursty)',
      flag: 'packet-loss-model',
      argument: { name: 'model', help: 'bernoulli (default) or gilbert_elliott (bursty)' },
    },
    {
      key: 'p',
      kind: 'number',
      unit: 'probability',
      ...PROBABILITY,
      help: 'gilbert_elliott: chance of entering the bad state',
    },
    {
      key: 'r',
      kind: 'number',
      unit: 'probability',
      ...PROBABILITY,
      help: 'gilbert_elliott: chance of leaving the bad state (default 0.5)',
    },
    {
      key: 'lossInBad',
      kind: 'number',
      unit: 'probability',
      default: 1,
      ...PROBABILITY,
      help: 'gilbert_elliott: loss in the bad state (1−h)',
    },
    {
      key: 'lossInGood',
      kind: 'number',
      unit: 'probability',
      default: 0,
      ...PROBABILITY,
      help: 'gilbert_elliott: loss in the good state (1−k)',
    },
    {
      key: 'rttMs',
      kind: 'number',
      unit: 'ms',
      min: 0,
      max: 60_000,
      default: 20,
      expected: 'a number of milliseconds in 0..60000',
      help: 'round-trip time the recovery stall is based on',
      flag: 'packet-loss-rtt',
      argument: { name: 'rtt', help: 'Round-trip time in ms the stall is based on (default 20)' },
    },
  ],
  // It counts stalls: a segment lost.
  counts: 'stall',
  acted: (counters) => counters.applications > 0 && counters.segmentsLost > 0,
  describe: (spec, scope) => `Packet Loss: ${scope}Rate: ${(spec.lossRate * 100).toFixed(2)}%, Model: ${spec.model}`,
} as const satisfies FaultDeclaration<FaultCounters, ResolvedPacketLoss>;
