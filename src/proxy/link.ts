/**
 * One direction of one proxied connection: reads chunks from `source`, runs them through the
 * stages of the faults attached to this direction, and writes the pieces to `dest` in order, each
 * no earlier than its time.
 *
 *   source ──data──▶ input queue ──head chunk──▶ stage ▶ stage ▶ … ──pieces──▶ dest.write
 *      ▲                                                                          │
 *      └──────── paused while held, while dest is full, or queue ≥ 1 MiB ◀────────┘
 *
 * With no stage attached and nothing queued, a chunk goes straight to `dest.write` (no timer, no
 * allocation), so the no-fault path costs what a bare pipe costs.
 *
 * A chunk is shaped only when it reaches the head of the queue, so a fault switched on or off
 * applies from the next chunk on; pieces already shaped keep their times (at most one chunk's
 * worth). Stages receive the chunk's arrival time, so delays are counted from arrival and
 * consecutive chunks are delayed in a pipeline, not one after another.
 */
import type { ChunkInfo, Fault, LinkDirection, LinkStage, TimedPiece } from './faults/fault.js';

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

/** How far ahead of a piece's time a wake-up timer aims (ms); see Link.wakeUpIn. */
const TIMER_AIM_SHORT_MS = 1;

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
  /** The wake-up for the next piece: a timer while it is far, an immediate when it is close. */
  private timer: { kind: 'timeout'; handle: NodeJS.Timeout } | { kind: 'immediate'; handle: NodeJS.Immediate } | undefined;
  private destFull = false;
  private sourcePaused = false;
  private sourceEnded = false;
  private endSent = false;
  private closed = false;
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

  start(): void {
    this.source.on('data', this.onData);
    this.source.on('end', this.onEnd);
    this.dest.on('drain', this.onDrain);
    // A 'data' listener may set the source flowing; start paused and let updateFlow decide, so a
    // fault that holds from the first byte (a blackhole already on) reads nothing.
    this.source.pause();
    this.sourcePaused = true;
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
    for (const old of this.stages) if (!stages.includes(old)) old.stage.detach(now);
    this.stages = stages;
    this.holding = stages.some((s) => s.stage.holds);
    this.pump();
  }

  /** Stops for good: drops what is queued and detaches every stage. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.cancelWakeUp();
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
    if (this.stages.length === 0 && this.queued === 0) {
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
    this.sourceEnded = true;
    this.pump();
  };

  private readonly onDrain = (): void => {
    this.destFull = false;
    this.pump();
  };

  private readonly onTimer = (): void => {
    this.timer = undefined;
    this.pump();
  };

  /** Writes every piece whose time has come, then arms one timer for the next. */
  private pump(): void {
    if (this.closed) return;
    while (!this.holding && !this.destFull && this.timer === undefined) {
      if (this.dest.destroyed) return;
      if (this.shapedNext >= this.shaped.length) {
        const chunk = this.input.shift();
        if (!chunk) {
          if (this.sourceEnded && !this.endSent) {
            this.endSent = true;
            this.dest.end();
          }
          break;
        }
        this.shaped = this.shape(chunk);
        this.shapedNext = 0;
      }
      const piece = this.shaped[this.shapedNext]!;
      const wait = piece.at - this.clock();
      if (wait > 0) {
        this.wakeUpIn(wait);
        break;
      }
      this.shapedNext++;
      this.queued -= piece.data.length;
      if (!this.dest.write(piece.data)) this.destFull = true;
    }
    this.updateFlow();
  }

  /**
   * Arms the wake-up for a piece due in `wait` ms, so that it is written on time and never early.
   * Node's timers have whole-millisecond resolution against a loop clock cached at the start of
   * each loop turn, so a timer fires up to a few milliseconds late (rounding `wait` up added about
   * 1 ms to every delay). A timer therefore aims about a millisecond short, and the rest is waited
   * with immediates, which still let I/O run between checks; pump() writes only once the clock
   * has reached the piece's time.
   */
  private wakeUpIn(wait: number): void {
    if (wait > TIMER_AIM_SHORT_MS + 1) {
      this.timer = { kind: 'timeout', handle: setTimeout(this.onTimer, Math.floor(wait - TIMER_AIM_SHORT_MS)) };
    } else {
      this.timer = { kind: 'immediate', handle: setImmediate(this.onTimer) };
    }
  }

  private cancelWakeUp(): void {
    if (this.timer?.kind === 'timeout') clearTimeout(this.timer.handle);
    else if (this.timer?.kind === 'immediate') clearImmediate(this.timer.handle);
    this.timer = undefined;
  }

  private shape(chunk: QueuedChunk): TimedPiece[] {
    let pieces: TimedPiece[] = [{ data: chunk.data, at: chunk.arrival }];
    const info: ChunkInfo = {
      arrival: chunk.arrival,
      messageStart: chunk.messageStart,
      now: this.clock(),
      followingBytes: this.queued - chunk.data.length,
    };
    for (const { fault, stage } of this.stages) {
      fault.counters[this.bytesField] += chunk.data.length;
      pieces = stage.shape(pieces, info);
    }
    return pieces;
  }

  private updateFlow(): void {
    const pause = this.holding || this.destFull || this.queued >= LINK_HIGH_WATER_BYTES;
    if (pause === this.sourcePaused || this.closed) return;
    this.sourcePaused = pause;
    if (pause) this.source.pause();
    else this.source.resume();
  }
}
