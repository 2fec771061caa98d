/**
 * latency: a delay once per message (default) or on every chunk, counted from the chunk's arrival.
 *
 * `latencyMs` is the centre and `deviationMs` the spread of the distribution:
 * - normal: mean latencyMs, standard deviation deviationMs;
 * - uniform: uniform in [latencyMs − deviationMs, latencyMs + deviationMs] (netem's meaning);
 * - pareto: latencyMs + deviationMs·Z, Z a Pareto (shape 3) standardised to mean 0 and sd 1, so
 *   the mean stays latencyMs and the tail is long on the right;
 * - pareto_normal: the same with Z = ¼ Pareto + ¾ normal (netem's paretonormal), re-standardised.
 * Every sample is truncated at 0 (a negative delay becomes 0).
 */
import { createRandom, type Random } from '../../kernel/random.js';
import { LATENCY_DISTRIBUTIONS } from './latency.declaration.js';
import { liveFault, type ChunkInfo, type Fault, type FaultTarget, type LinkStage, type TimedPiece } from './fault.js';

export { LATENCY_DISTRIBUTIONS };
export type LatencyDistribution = (typeof LATENCY_DISTRIBUTIONS)[number];

export interface LatencySpec extends FaultTarget {
  type: 'latency';
  latencyMs: number;
  /** Default 0. */
  deviationMs?: number;
  /** Default 'normal'. */
  distribution?: LatencyDistribution;
  /** Default false: once per message; true: every chunk read. */
  perOp?: boolean;
}

export type ResolvedLatency = Required<LatencySpec>;

// Pareto with shape 3 and scale 1 has mean 1.5 and standard deviation √0.75.
const PARETO_SHAPE = 3;
const PARETO_MEAN = 1.5;
const PARETO_SD = Math.sqrt(0.75);
const PARETO_NORMAL_SD = Math.sqrt(0.25 ** 2 + 0.75 ** 2);

/** Draws one delay (ms) from the spec's distribution; exported so tests can check the sample. */
export function latencySampler(spec: ResolvedLatency, random: Random): () => number {
  const { latencyMs: centre, deviationMs: spread } = spec;
  const standardPareto = (): number => (random.pareto(1, PARETO_SHAPE) - PARETO_MEAN) / PARETO_SD;
  const draw: () => number =
    spec.distribution === 'uniform'
      ? () => random.uniform(centre - spread, centre + spread)
      : spec.distribution === 'pareto'
        ? () => centre + spread * standardPareto()
        : spec.distribution === 'pareto_normal'
          ? () => centre + (spread * (0.25 * standardPareto() + 0.75 * random.normal(0, 1))) / PARETO_NORMAL_SD
          : () => random.normal(centre, spread);
  return spread === 0 ? () => Math.max(0, centre) : () => Math.max(0, draw());
}

export function createLatency(spec: ResolvedLatency, seed: number | string): Fault {
  return liveFault(spec, (link, { counters }): LinkStage => {
    const sample = latencySampler(spec, createRandom(seed, `${spec.name}/${link.connectionId}/${link.direction}`));
    return {
      holds: false,
      shape(pieces: TimedPiece[], chunk: ChunkInfo): TimedPiece[] {
        if (!spec.perOp && !chunk.messageStart) return pieces;
        const delay = sample();
        counters.applications++;
        counters.delayAddedMs += delay;
        for (const piece of pieces) piece.at += delay;
        return pieces;
      },
      detach() {},
    };
  });
}
