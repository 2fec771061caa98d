/**
 * A seeded random source: the same seed gives the same fault decisions.
 *
 * Each link (one direction of one connection) gets its own stream derived from the proxy seed and
 * a label such as "latency/3/downstream", so the decisions on one connection do not depend on how
 * the traffic of other connections interleaves with it.
 */

/** Uniform and non-uniform draws from one seeded stream. */
export interface Random {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform in [min, max). */
  uniform(min: number, max: number): number;
  /** Normal with the given mean and standard deviation (Box-Muller). */
  normal(mean: number, stdDev: number): number;
  /** Pareto with scale xm (the minimum) and shape alpha. */
  pareto(scale: number, shape: number): number;
  /** True with probability p. */
  chance(p: number): boolean;
}

/** A random source for `seed` and an optional label (hashed together into the generator's state). */
export function createRandom(seed: number | string, label = ''): Random {
  let h = hash32(`${seed}\u0000${label}`);
  // sfc32 state from four successive hashes of the seed: small, fast and well distributed.
  let a = h;
  let b = (h = hash32(`${h}b`));
  let c = (h = hash32(`${h}c`));
  let d = hash32(`${h}d`) | 1;
  const next = (): number => {
    a |= 0;
    b |= 0;
    c |= 0;
    d |= 0;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 12; i++) next(); // discard the first outputs, which still echo the seed

  let spareNormal: number | undefined;
  const standardNormal = (): number => {
    if (spareNormal !== undefined) {
      const value = spareNormal;
      spareNormal = undefined;
      return value;
    }
    let u = 0;
    while (u === 0) u = next();
    const v = next();
    const radius = Math.sqrt(-2 * Math.log(u));
    spareNormal = radius * Math.sin(2 * Math.PI * v);
    return radius * Math.cos(2 * Math.PI * v);
  };

  return {
    next,
    uniform: (min, max) => min + (max - min) * next(),
    normal: (mean, stdDev) => mean + stdDev * standardNormal(),
    pareto: (scale, shape) => scale / Math.pow(1 - next(), 1 / shape),
    chance: (p) => next() < p,
  };
}

/** FNV-1a over the UTF-16 code units, then a murmur3 finaliser to spread the bits. */
function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
