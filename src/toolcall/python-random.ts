/**
 * The random stream of Python's `random.Random(seed)`: the Mersenne Twister (MT19937) seeded as
 * CPython seeds it, with `random()` built from two 32-bit outputs into a 53-bit fraction.
 *
 * mcp-chaos draws its fault decisions from `random.Random(seed)` (one draw per fault per call, in
 * plan order), so a run that draws from this stream in the same order makes the same decisions as
 * mcp-chaos does for the same seed: the offline demo uses it to reproduce mcp-chaos's published
 * figures. Seeding, as CPython does:
 *   an integer   its absolute value, cut into 32-bit words (least significant first) → init_by_array
 *   a string     its UTF-8 bytes followed by their SHA-512 digest, read as one big-endian integer
 */
import { createHash } from 'node:crypto';
import type { Random } from '../kernel/random.js';

const N = 624;
const M = 397;

export function createPythonRandom(seed: number | bigint | string): Random {
  const state = new Uint32Array(N);
  let index = N;
  initByArray(state, seedWords(seed));

  const int32 = (): number => {
    if (index >= N) {
      twist(state);
      index = 0;
    }
    let y = state[index++]!;
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  };
  const next = (): number => {
    const a = int32() >>> 5; // 27 bits
    const b = int32() >>> 6; // 26 bits
    return (a * 67108864 + b) / 9007199254740992;
  };
  let spareGauss: number | undefined;
  return {
    next,
    uniform: (min, max) => min + (max - min) * next(),
    // As random.gauss: a pair from one angle and one radius, the second kept for the next call.
    normal: (mean, stdDev) => {
      let z = spareGauss;
      spareGauss = undefined;
      if (z === undefined) {
        const angle = next() * 2 * Math.PI;
        const radius = Math.sqrt(-2 * Math.log(1 - next()));
        z = Math.cos(angle) * radius;
        spareGauss = Math.sin(angle) * radius;
      }
      return mean + z * stdDev;
    },
    // As random.paretovariate, scaled.
    pareto: (scale, shape) => scale / Math.pow(1 - next(), 1 / shape),
    chance: (p) => next() < p,
  };
}

/** The init_by_array key CPython derives from a seed. */
function seedWords(seed: number | bigint | string): number[] {
  let value: bigint;
  if (typeof seed === 'string') {
    const bytes = Buffer.from(seed, 'utf8');
    const all = Buffer.concat([bytes, createHash('sha512').update(bytes).digest()]);
    value = BigInt(`0x${all.toString('hex')}`);
  } else if (typeof seed === 'bigint') {
    value = seed < 0n ? -seed : seed;
  } else {
    if (!Number.isInteger(seed))
      throw new RangeError(`a Python-compatible seed must be an integer or a string (got ${seed})`);
    value = BigInt(Math.abs(seed));
  }
  const words: number[] = [];
  while (value > 0n) {
    words.push(Number(value & 0xffffffffn));
    value >>= 32n;
  }
  return words.length === 0 ? [0] : words;
}

function initGenrand(state: Uint32Array, seed: number): void {
  state[0] = seed >>> 0;
  for (let i = 1; i < N; i++) {
    const prev = state[i - 1]!;
    state[i] = (Math.imul(1812433253, prev ^ (prev >>> 30)) + i) >>> 0;
  }
}

function initByArray(state: Uint32Array, key: readonly number[]): void {
  initGenrand(state, 19650218);
  let i = 1;
  let j = 0;
  for (let k = Math.max(N, key.length); k > 0; k--) {
    const prev = state[i - 1]!;
    state[i] = ((state[i]! ^ Math.imul(prev ^ (prev >>> 30), 1664525)) + key[j]! + j) >>> 0;
    i++;
    j++;
    if (i >= N) {
      state[0] = state[N - 1]!;
      i = 1;
    }
    if (j >= key.length) j = 0;
  }
  for (let k = N - 1; k > 0; k--) {
    const prev = state[i - 1]!;
    state[i] = ((state[i]! ^ Math.imul(prev ^ (prev >>> 30), 1566083941)) - i) >>> 0;
    i++;
    if (i >= N) {
      state[0] = state[N - 1]!;
      i = 1;
    }
  }
  state[0] = 0x80000000; // the most significant bit set: the state is never all zeros
}

function twist(state: Uint32Array): void {
  for (let i = 0; i < N; i++) {
    const y = (state[i]! & 0x80000000) | (state[(i + 1) % N]! & 0x7fffffff);
    state[i] = (state[(i + M) % N]! ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0)) >>> 0;
  }
}
