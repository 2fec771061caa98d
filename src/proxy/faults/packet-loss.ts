/**
 * packet_loss, as a user-space TCP proxy can honestly show it: TCP has already recovered every byte
 * the proxy reads, so dropping bytes would only corrupt the stream. Instead the stream is cut into
 * virtual 1448-byte segments (one Ethernet MSS), a seeded loss model marks some of them lost, and
 * the stream stalls from a lost segment onward (head-of-line blocking) for TCP's recovery time.
 * Every message starts a new segment (a message: data flowing this way after flowing the other
 * way, as latency counts them): a request or a response leaves in packets of its own, so a
 * 145-byte response is one segment that can be lost, not a tenth of a segment shared with its
 * neighbours (which let a 20% loss rate touch 1% of requests). Within a message, segments are
 * cut by byte offset, whatever sizes the reads come in, so a seed replays the same losses.
 *
 *
 * - fast retransmit, ≈ rttMs, when at least three more segments follow the lost one (the three
 *   duplicate ACKs that trigger it) — counting bytes of this chunk and bytes already read behind it;
 * - otherwise a tail loss, recovered by the loss probe / retransmission timeout: 200 ms + 2·rttMs
 *   (Linux's TCP_RTO_MIN plus two round trips).
 * The retransmission goes through the same model; each time it is lost again the timeout doubles
 * (at most 6 retries are modelled).
 *
 * Models: bernoulli (each segment lost with probability lossRate) and gilbert_elliott (netem's
 * gemodel): `p` good→bad and `r` bad→good transition probabilities, `lossInBad` (1−h, default 1)
 * and `lossInGood` (1−k, default 0). Without p, gilbert_elliott uses r = 0.5 (bursts of 2 segments
 * on average) and p = lossRate·r/(1−lossRate), which gives lossRate in the steady state.
 */
import { createRandom, type Random } from '../../kernel/random.js';
import { LOSS_MODELS, PACKET_LOSS } from './packet-loss.declaration.js';
import {
  liveFault,
  SpecReader,
  type ChunkInfo,
  type Fault,
  type FaultCounters,
  type FaultTarget,
  type LinkStage,
  type TimedPiece,
} from './fault.js';

export const SEGMENT_BYTES = 1448;
const DUPLICATE_ACK_THRESHOLD = 3;
const RTO_MIN_MS = 200;
const MAX_RETRIES = 6;

export { LOSS_MODELS };
export type LossModel = (typeof LOSS_MODELS)[number];

export interface PacketLossSpec extends FaultTarget {
  type: 'packet_loss';
  /** Probability a segment is lost, 0..1; default 0.05. */
  lossRate?: number;
  /** Default 'bernoulli'. */
  model?: LossModel;
  /** gilbert_elliott: good → bad transition probability. */
  p?: number;
  /** gilbert_elliott: bad → good transition probability. */
  r?: number;
  /** gilbert_elliott: loss probability in the bad state (1−h), default 1. */
  lossInBad?: number;
  /** gilbert_elliott: loss probability in the good state (1−k), default 0. */
  lossInGood?: number;
  /** Round-trip time of the emulated path (ms), default 20. */
  rttMs?: number;
}

export interface ResolvedPacketLoss extends Required<Omit<PacketLossSpec, 'p' | 'r'>> {
  p: number;
  r: number;
}

export function readPacketLoss(reader: SpecReader): ResolvedPacketLoss {
  const target = reader.target();
  const fields = reader.declared(PACKET_LOSS.fields) as Omit<ResolvedPacketLoss, 'type' | keyof FaultTarget> & {
    p: number | undefined;
    r: number | undefined;
  };
  const { lossRate, model, lossInBad, lossInGood, rttMs } = fields;
  let { p, r } = fields;
  if (model === 'bernoulli') {
    for (const field of ['p', 'r'] as const) {
      // 0 is what a resolved bernoulli spec carries, so validating a resolved spec again passes.
      const value = field === 'p' ? p : r;
      if (value !== undefined && value !== 0) reader.fail(field, 'left out unless model is gilbert_elliott');
    }
  } else {
    r ??= 0.5;
    if (p === undefined) {
      if (lossRate >= 1) reader.fail('lossRate', 'below 1 for gilbert_elliott without p');
      p = (lossRate * r) / (1 - lossRate);
      if (p > 1) reader.fail('lossRate', `low enough that p = lossRate·r/(1−lossRate) ≤ 1 with r = ${r}`);
    }
    if (p + r === 0) reader.fail('r', 'above 0 when p is 0');
  }
  reader.done();
  return { type: 'packet_loss', ...target, lossRate, model, p: p ?? 0, r: r ?? 0, lossInBad, lossInGood, rttMs };
}

/** A per-link loss decision: true when the next segment transmission is lost. */
export function lossModel(spec: ResolvedPacketLoss, random: Random): () => boolean {
  if (spec.model === 'bernoulli') return () => random.chance(spec.lossRate);
  let bad = false;
  // netem's order: the transition is drawn, then the loss with the state's previous probability.
  return () => {
    const lossProbability = bad ? spec.lossInBad : spec.lossInGood;
    bad = bad ? !random.chance(spec.r) : random.chance(spec.p);
    return random.chance(lossProbability);
  };
}

/** One link's packet loss. Exported so tests can drive it without sockets. */
export function packetLossStage(spec: ResolvedPacketLoss, lost: () => boolean, counters: FaultCounters): LinkStage {
  const rtoMs = RTO_MIN_MS + 2 * spec.rttMs;
  let segmentOffset = 0; // bytes of the current virtual segment already seen (0 = next byte starts one)
  return {
    holds: false,
    shape(pieces: TimedPiece[], chunk: ChunkInfo): TimedPiece[] {
      if (chunk.messageStart) segmentOffset = 0; // a message starts a segment (see the header)
      const out: TimedPiece[] = [];
      let chunkBytes = 0;
      for (const piece of pieces) chunkBytes += piece.data.length;
      let seen = 0; // bytes of the chunk before the current piece
      let floor = chunk.now; // a stall starts when the lost segment would otherwise leave
      for (const piece of pieces) {
        let at = piece.at;
        let start = 0; // start of the part of this piece not yet emitted
        let pos = segmentOffset === 0 ? 0 : SEGMENT_BYTES - segmentOffset;
        while (pos < piece.data.length) {
          const stall = stallFor(chunkBytes - (seen + pos) - SEGMENT_BYTES + chunk.followingBytes);
          if (stall > 0) {
            if (pos > start) out.push({ data: piece.data.subarray(start, pos), at });
            floor = Math.max(floor, at);
            at = floor + stall;
            floor = at;
            start = pos;
          }
          pos += SEGMENT_BYTES;
        }
        segmentOffset = (segmentOffset + piece.data.length) % SEGMENT_BYTES;
        out.push(start === 0 ? { data: piece.data, at } : { data: piece.data.subarray(start), at });
        seen += piece.data.length;
      }
      return out;
    },
    detach() {},
  };

  /** Draws one segment's fate; returns the stall (ms) it causes, 0 when it arrives. */
  function stallFor(bytesAfterSegment: number): number {
    counters.segments++;
    if (!lost()) return 0;
    counters.segmentsLost++;
    const fastRetransmit = bytesAfterSegment >= DUPLICATE_ACK_THRESHOLD * SEGMENT_BYTES;
    let stall = fastRetransmit ? spec.rttMs : rtoMs;
    let timeout = rtoMs;
    for (let retry = 0; retry < MAX_RETRIES; retry++) {
      counters.segments++;
      if (!lost()) break;
      counters.segmentsLost++;
      stall += timeout;
      timeout *= 2;
    }
    counters.applications++;
    counters.stallMs += stall;
    return stall;
  }
}

export function createPacketLoss(spec: ResolvedPacketLoss, seed: number | string): Fault {
  return liveFault(spec, (link, { counters }) =>
    packetLossStage(
      spec,
      lossModel(spec, createRandom(seed, `${spec.name}/${link.connectionId}/${link.direction}`)),
      counters,
    ),
  );
}
