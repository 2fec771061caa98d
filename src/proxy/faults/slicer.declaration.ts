/** slicer's declaration (see declaration.ts): Toxiproxy's `slicer` toxic. */
import type { FaultCounters } from './fault.js';
import type { ResolvedSlicer } from './slicer.js';
import type { FaultDeclaration } from './declaration.js';

const MAX_SIZE = 1 << 30;
/** A piece's time apart from the next is at most a minute. */
const MAX_DELAY_US = 60_000_000;

export const SLICER = {
  type: 'slicer',
  plane: 'network',
  help: 'chunks cut into pieces of about the average size, sent `delayUs` apart (never reordered)',
  toxic: { type: 'slicer' },
  proxyFlag: { name: 'slicer', help: 'add a slicer: chunks cut into pieces of about BYTES (--slicer-delay apart)' },
  fields: [
    {
      key: 'averageSize',
      kind: 'integer',
      unit: 'bytes',
      required: true,
      min: 1,
      max: MAX_SIZE,
      expected: `a whole number of bytes in 1..${MAX_SIZE}`,
      help: 'the size pieces are cut around',
      toxic: { attribute: 'average_size' },
      flag: 'slicer',
    },
    {
      key: 'sizeVariation',
      kind: 'integer',
      unit: 'bytes',
      default: 0,
      min: 0,
      max: MAX_SIZE,
      expected: 'a whole number of bytes, 0 or more',
      help: "how far a piece's size may stray from the average",
      toxic: { attribute: 'size_variation' },
      flag: 'slicer-size-variation',
    },
    {
      key: 'delayUs',
      kind: 'number',
      unit: 'µs',
      default: 0,
      min: 0,
      max: MAX_DELAY_US,
      expected: `a number of microseconds in 0..${MAX_DELAY_US}`,
      help: 'time between pieces',
      toxic: { attribute: 'delay' },
      flag: 'slicer-delay',
    },
  ],
  counts: 'slice',
  acted: (counters) => counters.applications > 0,
  describe: (spec, scope) =>
    `Slicer: ${scope}Average Size: ${spec.averageSize} B, Variation: ${spec.sizeVariation} B, ` +
    `Delay: ${spec.delayUs} µs`,
} as const satisfies FaultDeclaration<FaultCounters, ResolvedSlicer>;
