/**
 * Sends a session's request bytes to its upstream in arrival order, each batch no earlier than its
 * release time (a latency fault delays a request from its arrival; requests behind it wait for it,
 * as on a real link). The upstream's TCP path is opened on the first send, so a fault that answers
 * by itself never touches the target.
 *
 * Backpressure: once bytes waiting here (delayed, or behind an upstream link that paused: a blackhole,
 * a full target) pile up past a bound, the client socket is paused; it resumes once they drain.
 * Below the bound the client is still read, so the session sees each request it sends and a fault
 * holding the link counts them (a Redis blackhole "held 291 commands", not one), as a real network's
 * buffers would take them.
 */
import type net from 'node:net';
import type { ClientEnd, ClientEndSink } from '../client-end.js';

/** Delayed bytes above which the client is paused. */
const MAX_DELAYED_BYTES = 1 << 20;
/** Due batches joined into one push up to this many bytes. */
const JOIN_BYTES = 64 * 1024;

interface Batch {
  at: number;
  data: Buffer;
}

export interface ForwarderOptions {
  clock(): number;
  /** Opens the TCP path and returns its client end (undefined when the proxy is stopping). */
  open(): ClientEnd | undefined;
  /**
   * Open a new TCP path when the last one closed (HTTP: exchanges are independent). Otherwise the
   * session ends with its upstream: a Redis connection's state (AUTH, SELECT) must not be lost
   * behind the client's back.
   */
  reopen: boolean;
  /** Stop or restart reading the client. */
  pauseClient(): void;
  resumeClient(): void;
}

export class Forwarder {
  private end: ClientEnd | undefined;
  private readonly queue: Batch[] = [];
  private queuedBytes = 0;
  private lastAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private blocked = false;
  private ending = false;
  private closed = false;
  private gathering = false;

  constructor(private readonly options: ForwarderOptions) {}

  /** The TCP path's client end, once opened. */
  get upstream(): ClientEnd | undefined {
    return this.end;
  }

  /** Whether a TCP path was opened or bytes wait to be sent on one. */
  get busy(): boolean {
    return this.end !== undefined || this.queue.length > 0;
  }

  /** Queues `data` to be sent at `at` (performance.now() ms) or later, after everything queued before it. */
  send(data: Buffer, at: number): void {
    if (this.closed || this.ending) return;
    this.lastAt = Math.max(this.lastAt, at);
    this.queue.push({ at: this.lastAt, data });
    this.queuedBytes += data.length;
    if (!this.gathering) this.pump();
  }

  /**
   * Runs `read` (the session reading one client chunk) with the sends it makes held, then releases
   * them together: a pipeline's commands then reach the target in one write.
   */
  gather(read: () => void): void {
    if (this.gathering) return read();
    this.gathering = true;
    try {
      read();
    } finally {
      this.gathering = false;
      this.pump();
    }
  }

  /** The client's end of requests: sent on after every queued byte. */
  finish(): void {
    this.ending = true;
    this.pump();
  }

  /** Drops what is queued and the TCP path (the session is over). */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.queue.length = 0;
    this.queuedBytes = 0;
    this.end?.destroy();
  }

  private pump(): void {
    if (this.closed) return;
    if (!this.blocked) this.release();
    if (this.closed) return;
    if (this.queuedBytes >= MAX_DELAYED_BYTES) this.options.pauseClient();
    else this.options.resumeClient();
  }

  /**
   * Pushes every batch whose time has come, until the upstream pauses. Batches due together (a
   * pipeline read in one chunk: each command is a batch) go as one push, so one write to the
   * target rather than one per command (JOIN_BYTES at most: past that a copy costs more).
   */
  private release(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.queue.length > 0) {
      const first = this.queue[0]!;
      const wait = first.at - this.options.clock();
      if (wait > 0) {
        // Never early: a timer may fire before its time is reached on the clock; pump checks again.
        this.timer = setTimeout(() => this.pump(), Math.max(1, Math.ceil(wait)));
        break;
      }
      const end = this.openOnce();
      if (!end) return void this.close();
      let count = 1;
      let bytes = first.data.length;
      const now = this.options.clock();
      for (; count < this.queue.length; count++) {
        const next = this.queue[count]!;
        if (next.at > now || bytes + next.data.length > JOIN_BYTES) break;
        bytes += next.data.length;
      }
      const batches = this.queue.splice(0, count);
      this.queuedBytes -= bytes;
      const data =
        count === 1
          ? first.data
          : Buffer.concat(
              batches.map((batch) => batch.data),
              bytes,
            );
      if (!end.push(data)) {
        this.blocked = true;
        end.once('flowing', () => {
          this.blocked = false;
          this.pump();
        });
        break;
      }
    }
    if (this.queue.length === 0 && this.ending && this.end) this.end.pushEnd();
  }

  /** Opens the TCP path now (a stream whose server speaks first needs it before any request). */
  openOnce(): ClientEnd | undefined {
    if (!this.end || (this.end.destroyed && this.options.reopen)) this.end = this.options.open();
    return this.end && !this.end.destroyed ? this.end : undefined;
  }
}

/**
 * The forwarder of a session that owns its client socket and ends with its upstream: it pauses
 * and resumes that socket (resuming only while `mayResume` says so, e.g. not during a hang).
 */
export function sessionForwarder(
  socket: net.Socket,
  options: { clock(): number; openUpstream(sink: ClientEndSink): ClientEnd | undefined },
  sink: ClientEndSink,
  mayResume: () => boolean = () => true,
): Forwarder {
  return new Forwarder({
    clock: options.clock,
    open: () => options.openUpstream(sink),
    reopen: false,
    pauseClient: () => socket.pause(),
    resumeClient: () => {
      if (mayResume()) socket.resume();
    },
  });
}
