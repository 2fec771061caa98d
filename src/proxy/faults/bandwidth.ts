/**
 * bandwidth: a token bucket that releases bytes at `bytesPerSecond`, per connection and direction
 * (scope 'connection', the default) or shared by every connection of the proxy, per direction
 * (scope 'shared').
 *
 * The bucket holds no burst: each piece leaves when its last byte would have been sent at the
 * rate, so throughput over any stretch of steady traffic is the rate. A late timer does not slow
 * the stream down, because the next release is computed from the bucket's own clock (the
 * "theoretical arrival time"), not from when the timer fired. Chunks are cut into slices of 20 ms
 * worth (at least 64 bytes) so the stream flows smoothly instead of in bursts.
 *
 * `parseBandwidth(rate, unit)`: units are bytes per second unless they say bit: bps = B/s, kbps = 1e3 B/s, mbps = 1e6
 * B/s, gbps = 1e9 B/s; bit/s, kbit/s,
 * mbit/s, gbit/s are bits. Case-insensitive; no unit means bps.
 */
import { InputError } from '../../kernel/errors.js';
import { BANDWIDTH_UNITS, UNIT_BYTES } from '../vocabulary.js';
import { BANDWIDTH_SCOPES, MAX_BYTES_PER_SECOND } from './bandwidth.declaration.js';
import {
  liveFault,
  type ChunkInfo,
  type Fault,
  type FaultCounters,
  type FaultTarget,
  type LinkDirection,
  type LinkStage,
  type TimedPiece,
} from './fault.js';

export { BANDWIDTH_SCOPES };
export type BandwidthScope = (typeof BANDWIDTH_SCOPES)[number];

export interface BandwidthSpec extends FaultTarget {
  type: 'bandwidth';
  /** Bytes per second, > 0 (see parseBandwidth for units). */
  bytesPerSecond: number;
  /** Default 'connection'. */
  scope?: BandwidthScope;
}

export type ResolvedBandwidth = Required<BandwidthSpec>;

export { BANDWIDTH_UNITS };
export { MAX_BYTES_PER_SECOND };

/** Bytes per second for `rate` in `unit`; throws naming `rate` or `unit` and listing the units. */
export function parseBandwidth(rate: number, unit = 'bps'): number {
  const units =
    `${BANDWIDTH_UNITS.join(', ')} (case-insensitive; ` +
    `bps/kbps/mbps/gbps are bytes per second ×1/1e3/1e6/1e9, the ` +
    `bit/s forms are bits)`;
  const factor = typeof unit === 'string' ? UNIT_BYTES[unit.trim().toLowerCase() || 'bps'] : undefined;
  if (factor === undefined)
    throw new InputError(`bandwidth unit ${JSON.stringify(unit)} is unknown; accepted units: ${units}`);
  if (typeof rate !== 'number' || !Number.isFinite(rate) || rate <= 0) {
    throw new InputError(
      `bandwidth rate must be a number above 0 (got ${JSON.stringify(rate)}); accepted units: ${units}`,
    );
  }
  const bytesPerSecond = rate * factor;
  if (bytesPerSecond > MAX_BYTES_PER_SECOND) {
    throw new InputError(
      `bandwidth rate ${rate} ${unit} is above the largest cap, ${MAX_BYTES_PER_SECOND / 1e9} gbps (bytes)`,
    );
  }
  return bytesPerSecond;
}

const SLICE_SECONDS = 0.02;
const MIN_SLICE_BYTES = 64;
// How far the bucket's clock may lag the present: enough to absorb late timers, too little to
// let a link that was back-pressured for a while burst above the rate afterwards.
const MAX_LAG_MS = 20;

/** A bucket's clock: when the last byte released so far has "been sent" at the rate. */
interface Bucket {
  readyAt: number;
}

/** One link's pacing through `bucket`. Exported so tests can drive it without sockets. */
export function bandwidthStage(spec: ResolvedBandwidth, bucket: Bucket, counters: FaultCounters): LinkStage {
  const msPerByte = 1000 / spec.bytesPerSecond;
  const sliceBytes = Math.max(MIN_SLICE_BYTES, Math.floor(spec.bytesPerSecond * SLICE_SECONDS));
  return {
    holds: false,
    shape(pieces: TimedPiece[], chunk: ChunkInfo): TimedPiece[] {
      const out: TimedPiece[] = [];
      bucket.readyAt = Math.max(bucket.readyAt, chunk.now - MAX_LAG_MS);
      for (const piece of pieces) {
        for (let start = 0; start < piece.data.length; start += sliceBytes) {
          const data =
            start === 0 && piece.data.length <= sliceBytes
              ? piece.data
              : piece.data.subarray(start, start + sliceBytes);
          bucket.readyAt = Math.max(bucket.readyAt, piece.at) + data.length * msPerByte;
          out.push({ data, at: bucket.readyAt });
          counters.applications++;
          counters.bytesPaced += data.length;
        }
      }
      return out;
    },
    detach() {},
  };
}

export function createBandwidth(spec: ResolvedBandwidth): Fault {
  const shared: Record<LinkDirection, Bucket> = { upstream: { readyAt: 0 }, downstream: { readyAt: 0 } };
  return liveFault(spec, (link, { counters }) =>
    bandwidthStage(spec, spec.scope === 'shared' ? shared[link.direction] : { readyAt: 0 }, counters),
  );
}
