/**
 * One direction of one proxied connection: reads chunks from `source`, runs them through the
 * stages of the faults attached to this direction, and writes the pieces to `dest` in order, each
 * no earlier than its time.
 *
 *   source ──data──▶ input queue ──head chunk──▶ stage ▶ stage ▶ … ──pieces──▶ dest.write
 *      ▲                                                                          │
 *      └──── paused once 64 KiB is held, while dest is full, or queue ≥ 1 MiB ◀────┘
 *
 * With no stage attached and nothing queued, a chunk goes straight to `dest.write` (no timer, no
 * allocation), so the no-fault path costs what a bare pipe costs.
 *
 * A chunk is shaped only when it reaches the head of the queue, so a fault switched on or off
 * applies from the next chunk on; pieces already shaped keep their times (at most one chunk's
 * worth). Stages receive the chunk's arrival time, so delays are counted from arrival and
 * consecutive chunks are delayed in a pipeline, not one after another.
 *
 * A held link still reads a little (HELD_READ_BYTES), so that a client that leaves while held is
 * seen: its end read while held drops what it sent (onLeftWhileHeld), never delivered later.
 */
import type { ChunkInfo, Fault, LinkDirection, LinkStage, TimedPiece } from './faults/fault.js';
import { threadWakeUps, type Wake } from '../clock/index.js';

/** What a link reads from: a socket, or the client end a protocol stage drives (client-end.ts). */
export interface LinkSource {
  on(event: 'data', listener: (data: Buffer) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  off(event: 'data', listener: (data: Buffer) => void): unknown;
  off(event: 'end', listener: () => void): unknown;
  pause(): unknown;
  resume(): unknown;
}

/** What a link writes to. */
export interface LinkSink {
  write(data: Buffer): boolean;
  end(): unknown;
  readonly destroyed: boolean;
  on(event: 'drain', listener: () => void): unknown;
  off(event: 'drain', listener: () => void): unknown;
}

/** Bytes read but not yet written above which the source is paused. */
export const LINK_HIGH_WATER_BYTES = 1 << 20;
/** Bytes read from the source while the link holds, above which it is paused (enough to read a leaving client's end). */
export const HELD_READ_BYTES = 64 * 1024;

/** A fault's stage on this link. */
export interface AttachedStage {
  fault: Fault;
  stage: LinkStage;
}

/** State both links of a connection share. */
export interface ConnectionFlow {
  /** The direction data last flowed in; a change starts a new message (latency's per-message mode). */
  lastDirection?: LinkDirection;
}

interface QueuedChunk {
  data: Buffer;
  arrival: number;
  messageStart: boolean;
}

export class Link {
  private stages: AttachedStage[] = [];
  private holding = false;
  private readonly input: QueuedChunk[] = [];
  private shaped: TimedPiece[] = [];
  private shapedNext = 0;
  private queued = 0;
  /** The one wake-up of this link: for the piece at the head, whose time has not come. */
  private wake: Wake | undefined;
  private destFull = false;
  private sourcePaused = false;
  private sourceEnded = false;
  private endSent = false;
  /** When the source's end was read (slow_close counts its delay from there). */
  private endReadAt = 0;
  /** A stage asked to end the stream after the pieces already shaped (LinkControl.finish). */
  private finishing = false;
  private shaping = false;
  private closed = false;
  /** Called once the destination was ended by finish() (the connection then closes). */
  onFinished: (() => void) | undefined;
  /** Counts the bytes handed to the destination (what a fault that cuts or resets did not pass on). */
  countWritten: ((bytes: number) => void) | undefined;
  /**
   * Set where the source is the client: its end read while the link holds means the client left,
   * so what it sent is dropped (a half-close cannot be told from a close); this runs when the hold ends.
   */
  onLeftWhileHeld: (() => void) | undefined;
  private left = false;
  private readonly bytesField: 'bytesUpstream' | 'bytesDownstream';

  constructor(
    readonly direction: LinkDirection,
    private readonly source: LinkSource,
    private readonly dest: LinkSink,
    private readonly flow: ConnectionFlow,
    private readonly countRead: (bytes: number) => void,
    private readonly clock: () => number,
  ) {
    this.bytesField = direction === 'upstream' ? 'bytesUpstream' : 'bytesDownstream';
  }

  /** Starts reading; `pending` is what was read from the source before the link existed (sent first). */
  start(pending: readonly Buffer[] = []): void {
    this.source.on('data', this.onData);
    this.source.on('end', this.onEnd);
    this.dest.on('drain', this.onDrain);
    // A 'data' listener may set the source flowing; start paused and let updateFlow decide, so a
    // fault that holds from the first byte (a blackhole already on) reads nothing.
    this.source.pause();
    this.sourcePaused = true;
    for (const chunk of pending) this.onData(chunk);
    this.updateFlow();
  }

  /** Bytes read from the source and not yet handed to the destination. */
  get queuedBytes(): number {
    return this.queued;
  }

  /** The source's end was read and passed on after every byte. */
  get finished(): boolean {
    return this.endSent;
  }

  get sourceDone(): boolean {
    return this.sourceEnded;
  }

  get attached(): readonly AttachedStage[] {
    return this.stages;
  }

  /** Replaces the stage list; stages no longer present are detached. */
  setStages(stages: AttachedStage[]): void {
    const now = this.clock();
    const kept = new Set(stages);
    for (const old of this.stages) if (!kept.has(old)) old.stage.detach(now);
    this.stages = stages;
    this.holding = stages.some((s) => s.stage.holds);
    if (this.left && !this.holding) return this.onLeftWhileHeld?.();
    if (stages.some((s) => !s.stage.holds)) threadWakeUps().prepare();
    this.pump();
  }

  /**
   * Ends the stream where it stands: nothing more is read, the pieces already shaped are written,
   * then the destination is ended and onFinished runs (limit_data's cut).
   */
  finish(): void {
    if (this.finishing || this.closed) return;
    this.finishing = true;
    // Called from a stage's shape(): the pump that is shaping writes the pieces, then ends.
    if (!this.shaping) this.pump();
  }

  /** Stops for good: drops what is queued and detaches every stage. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    threadWakeUps().cancel(this.wake);
    this.wake = undefined;
    const now = this.clock();
    for (const attached of this.stages) attached.stage.detach(now);
    this.stages = [];
    this.input.length = 0;
    this.shaped = [];
    this.queued = 0;
    this.source.off('data', this.onData);
    this.source.off('end', this.onEnd);
    this.dest.off('drain', this.onDrain);
  }

  private readonly onData = (data: Buffer): void => {
    const messageStart = this.flow.lastDirection !== this.direction;
    this.flow.lastDirection = this.direction;
    this.countRead(data.length);
    if (this.finishing) return; // read while the cut was under way: past the cut, never written
    if (this.stages.length === 0 && this.queued === 0) {
      this.countWritten?.(data.length);
      if (!this.dest.write(data)) {
        this.destFull = true;
        this.updateFlow();
      }
      return;
    }
    this.input.push({ data, arrival: this.clock(), messageStart });
    this.queued += data.length;
    this.pump();
  };

  private readonly onEnd = (): void => {
    if (this.holding) for (const attached of this.stages) attached.stage.sourceEnded?.();
    if (this.closed) return;
    if (this.holding && this.onLeftWhileHeld) {
      this.left = true;
      this.dropQueued();
      this.updateFlow();
      return;
    }
    this.sourceEnded = true;
    this.endReadAt = this.clock();
    this.pump();
  };

  private readonly onDrain = (): void => {
    this.destFull = false;
    this.pump();
  };

  private readonly onWake = (): void => {
    this.wake = undefined;
    this.pump();
  };

  /**
   * Writes every piece whose time has come, then arms one wake-up for the next. The wake-up comes
   * within a fraction of a millisecond of the piece's time without spinning (clock/wake-ups.ts); the
   * piece is written only once this link's clock has reached its time, so never early.
   */
  private pump(): void {
    if (this.closed || this.left) return;
    while (!this.holding && !this.destFull && this.wake === undefined) {
      if (this.dest.destroyed) return;
      if (this.shapedNext >= this.shaped.length) {
        if (this.finishing) {
          this.endFinished();
          break;
        }
        const chunk = this.input.shift();
        if (!chunk) {
          if (this.sourceEnded && !this.endSent) {
            const wait = this.endReadAt + this.endDelay() - this.clock();
            if (wait > 0) {
              this.wake = threadWakeUps().after(wait, this.onWake);
              break;
            }
            this.endSent = true;
            this.dest.end();
          }
          break;
        }
        this.shaped = this.shape(chunk);
        this.shapedNext = 0;
        // A stage that ends the connection may keep none of the chunk (or a part of it).
        this.queued -= chunk.data.length - this.shaped.reduce((sum, piece) => sum + piece.data.length, 0);
        if (this.shaped.length === 0) continue;
      }
      const piece = this.shaped[this.shapedNext]!;
      const wait = piece.at - this.clock();
      if (wait > 0) {
        this.wake = threadWakeUps().after(wait, this.onWake);
        break;
      }
      this.shapedNext++;
      this.queued -= piece.data.length;
      this.countWritten?.(piece.data.length);
      if (!this.dest.write(piece.data)) this.destFull = true;
    }
    this.updateFlow();
  }

  /** The longest end-of-stream delay a stage asks for (slow_close), in ms. */
  private endDelay(): number {
    let delay = 0;
    for (const { stage } of this.stages) delay = Math.max(delay, stage.endDelayMs?.() ?? 0);
    return delay;
  }

  /** finish(): drops what was read but not shaped, ends the destination, tells the connection. */
  private endFinished(): void {
    for (const chunk of this.input) this.queued -= chunk.data.length;
    this.input.length = 0;
    if (this.endSent) return;
    this.endSent = true;
    this.dest.end();
    this.onFinished?.();
  }

  private shape(chunk: QueuedChunk): TimedPiece[] {
    let pieces: TimedPiece[] = [{ data: chunk.data, at: chunk.arrival }];
    const info: ChunkInfo = {
      arrival: chunk.arrival,
      messageStart: chunk.messageStart,
      now: this.clock(),
      followingBytes: this.queued - chunk.data.length,
    };
    this.shaping = true;
    try {
      for (const { fault, stage } of this.stages) {
        fault.counters[this.bytesField] += chunk.data.length;
        pieces = stage.shape(pieces, info);
      }
    } finally {
      this.shaping = false;
    }
    return pieces;
  }

  /** What was read and not written is dropped (the client left while held). */
  private dropQueued(): void {
    threadWakeUps().cancel(this.wake);
    this.wake = undefined;
    this.input.length = 0;
    this.shaped = [];
    this.shapedNext = 0;
    this.queued = 0;
  }

  private updateFlow(): void {
    const pause =
      (this.holding && (this.left || this.queued >= HELD_READ_BYTES)) ||
      this.finishing ||
      this.destFull ||
      this.queued >= LINK_HIGH_WATER_BYTES;
    if (pause === this.sourcePaused || this.closed) return;
    this.sourcePaused = pause;
    if (pause) this.source.pause();
    else this.source.resume();
  }
}
