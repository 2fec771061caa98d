/**
 * One Redis client connection through a protocol-aware mapping: each command runs through the
 * request faults, as mcp-chaos-monkey's Redis interceptor treats each call, and the replies reach
 * the client in command order, the proxy's own answers among them.
 *
 *   client ─▶ command framer ─▶ faults ─┬─ forward (maybe delayed) ─▶ TCP path ─▶ redis
 *                                        ├─ answer: -ERR … (error; timeout once its hang is over)
 *                                        └─ reset (connection_refused)
 *   client ◀─ slots, in command order ◀─ reply framer ◀─ TCP path ◀─ redis
 *
 * Each command takes a slot: a forwarded one is filled by the server's next reply (streamed to the
 * client as it comes when the slot is first in line), an answered one by the proxy. A reply may
 * be replaced (error with forward), withheld or cut (connection_drop). RESP3 pushes are out of
 * band and go straight through. After a command that changes how the server replies (SUBSCRIBE,
 * MONITOR, CLIENT REPLY, replication) or bytes that are not RESP, the rest of the connection passes
 * through untouched: replies can no longer be paired with commands.
 */
import type net from 'node:net';
import type { ClientEnd, ClientEndSink } from '../client-end.js';
import type { HttpTimeoutSpec } from '../http/timeout.js';
import { sessionForwarder, type Forwarder } from '../requests/forwarder.js';
import { closeAfterServer } from '../requests/tcp-session.js';
import { SessionTimers } from '../requests/timers.js';
import type { RequestFaultList } from '../requests/fault-list.js';
import { RespError, RespFramer, type RespValueEnd } from './framer.js';

/** Command bytes held while a command is read whole; past this it is decided and streamed. */
const DECIDE_BY_BYTES = 64 * 1024;
/** Reply bytes held for commands behind a slow one, past which the server is paused. */
const MAX_HELD_REPLY_BYTES = 1 << 20;
/** Commands after which replies can no longer be paired with commands. */
const MODE_CHANGES = new Set(['SUBSCRIBE', 'PSUBSCRIBE', 'SSUBSCRIBE', 'MONITOR', 'SYNC', 'PSYNC', 'REPLCONF']);

interface Slot {
  /** Waits for a server reply (else the proxy answers). */
  forwarded: boolean;
  /** The proxy's answer, once known. */
  answer?: Buffer;
  /** The server reply is complete. */
  complete: boolean;
  /** What becomes of the server's reply. */
  reply: 'pass' | 'replace' | 'withhold';
  replacement?: Buffer;
  /** Reply bytes still to deliver before the connection is cut (connection_drop afterBytes). */
  cutAfter?: number;
  /** Takes every server byte from now on (the pairing is over). */
  rest: boolean;
  held: Buffer[];
}

export interface RespSessionOptions {
  socket: net.Socket;
  index: number;
  faults: RequestFaultList;
  clock(): number;
  /** Opens the mapping's TCP path with `sink` as its client side. */
  openUpstream(sink: ClientEndSink): ClientEnd | undefined;
  /** Counts a command. */
  countCommand(): void;
  /** A command went onto the TCP path (the network faults there count it). */
  forwarded?(): void;
}

export class RespSession implements ClientEndSink {
  private readonly socket: net.Socket;
  private readonly commands = new RespFramer('commands');
  private readonly replies = new RespFramer('replies');
  private readonly forwarder: Forwarder;
  private readonly slots: Slot[] = [];
  /** Forwarded slots still waiting for their reply, oldest first. */
  private readonly awaiting: Slot[] = [];
  private current: { chunks: Buffer[]; bytes: number; arrival: number; slot?: Slot; forwardAt?: number } | undefined;
  /** Commands pass through without faults or slots from now on. */
  private raw = false;
  private heldBytes = 0;
  private serverFull = false;
  private serverEnded = false;
  private readonly timers = new SessionTimers();
  private done = false;

  constructor(private readonly options: RespSessionOptions) {
    this.socket = options.socket;
    this.forwarder = sessionForwarder(this.socket, options, this);
  }

  start(): void {
    this.socket.on('data', (chunk: Buffer) => this.onClientData(chunk));
    this.socket.on('end', () => {
      this.forwarder.finish();
      // Nothing was ever sent upstream: there is no server end to wait for.
      if (!this.forwarder.busy) this.end();
    });
    this.socket.on('error', () => this.socket.destroy());
    this.socket.on('drain', () => this.drainIfFree());
    this.socket.once('close', () => this.finish());
    this.socket.resume();
  }

  // ── client → server ──────────────────────────────────────────────────────────────────────

  private onClientData(chunk: Buffer): void {
    if (this.raw) return this.forwarder.send(chunk, this.options.clock());
    this.forwarder.gather(() => this.readCommands(chunk));
  }

  private readCommands(chunk: Buffer): void {
    let start = 0;
    try {
      this.commands.feed(chunk, (value) => {
        this.take(chunk.subarray(start, value.end));
        start = value.end;
        this.endCommand(value);
      });
    } catch (error) {
      if (!(error instanceof RespError)) throw error;
      // Not RESP after all: what was read of this command, then everything else, goes as it is.
      this.passThroughFromHere();
      this.take(chunk.subarray(start));
      return this.flushCurrentRaw();
    }
    if (start < chunk.length) this.take(chunk.subarray(start));
  }

  /** Bytes of the command being read. */
  private take(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.current ??= { chunks: [], bytes: 0, arrival: this.options.clock() };
    const current = this.current;
    if (current.slot || current.forwardAt !== undefined) {
      // Decided already (a long command): its bytes follow the decision.
      if (current.forwardAt !== undefined) this.forwarder.send(bytes, current.forwardAt);
      return;
    }
    current.chunks.push(bytes);
    current.bytes += bytes.length;
    if (current.bytes > DECIDE_BY_BYTES) this.decide(this.commands.wordsSoFar);
  }

  private endCommand(value: RespValueEnd): void {
    if (this.done) return;
    if (!this.current?.slot && this.current?.forwardAt === undefined) this.decide(value.words);
    const slot = this.current?.slot;
    this.current = undefined;
    const [name = '', argument = ''] = value.words;
    const changesMode = MODE_CHANGES.has(name) || (name === 'CLIENT' && argument.toUpperCase() === 'REPLY');
    if (changesMode && slot?.forwarded) {
      slot.rest = true;
      this.raw = true;
    }
  }

  /** Runs the faults for the command being read and acts on it. */
  private decide(words: readonly string[]): void {
    const current = this.current!;
    this.options.countCommand();
    const won = this.options.faults.draw(this.options.index, 'resp', words[0] ?? '', '');
    const slot: Slot = { forwarded: true, complete: false, reply: 'pass', rest: false, held: [] };
    let delay = 0;
    for (const { spec } of won) {
      switch (spec.type) {
        case 'latency':
          delay += spec.delay;
          continue;
        case 'error':
          if (spec.forward) {
            slot.reply = 'replace';
            slot.replacement ??= respError(spec.message);
            continue;
          }
          return this.answerWith(slot, respError(spec.message));
        case 'timeout':
          return this.hold(slot, spec);
        case 'connection_refused':
          this.done = true;
          this.socket.resetAndDestroy();
          return;
        case 'connection_drop':
          if (spec.after_ms !== undefined) this.cutAfterMs(slot, spec.after_ms);
          else slot.cutAfter ??= spec.after_bytes;
          continue;
        default:
          continue; // not expressible in RESP: refused when set on a Redis mapping
      }
    }
    current.slot = slot;
    current.forwardAt = current.arrival + delay;
    this.addSlot(slot);
    for (const bytes of current.chunks) this.forwarder.send(bytes, current.forwardAt);
    current.chunks = [];
    // After the send, which opened the TCP path for a first command (unless a latency fault delays it).
    this.options.forwarded?.();
  }

  private answerWith(slot: Slot, answer: Buffer): void {
    slot.forwarded = false;
    slot.answer = answer;
    this.current!.slot = slot;
    this.current!.chunks = [];
    this.slots.push(slot);
    this.flush();
  }

  /** timeout: the command never reaches the server; after `hang` ms the client gets an error (never without hang). */
  private hold(slot: Slot, spec: HttpTimeoutSpec): void {
    slot.forwarded = false;
    this.current!.slot = slot;
    this.current!.chunks = [];
    this.slots.push(slot);
    if (spec.hang === undefined) return;
    this.timers.later(spec.hang, () => {
      slot.answer = respError(`faultline: timeout, no reply within ${spec.hang} ms`);
      this.flush();
    });
  }

  private cutAfterMs(slot: Slot, ms: number): void {
    slot.reply = 'withhold';
    this.timers.later(ms, () => this.socket.destroy());
  }

  private addSlot(slot: Slot): void {
    this.slots.push(slot);
    this.awaiting.push(slot);
  }

  private passThroughFromHere(): void {
    this.raw = true;
    const rest: Slot = { forwarded: true, complete: false, reply: 'pass', rest: true, held: [] };
    this.addSlot(rest);
  }

  private flushCurrentRaw(): void {
    const current = this.current;
    this.current = undefined;
    if (!current) return;
    for (const bytes of current.chunks) this.forwarder.send(bytes, this.options.clock());
  }

  // ── server → client (the TCP path's sink) ────────────────────────────────────────────────

  write(data: Buffer): boolean {
    const target = this.awaiting[0];
    // The replies of a pipeline come in one chunk and are written one by one: corked, they leave in one write.
    this.socket.cork();
    try {
      if (target?.rest) this.toSlot(target, data);
      else this.splitReplies(data);
      this.flush();
    } finally {
      this.socket.uncork();
    }
    this.serverFull = this.heldBytes >= MAX_HELD_REPLY_BYTES || this.socket.writableNeedDrain;
    return !this.serverFull;
  }

  private splitReplies(data: Buffer): void {
    let start = 0;
    try {
      this.replies.feed(data, (value) => {
        this.reply(data.subarray(start, value.end), value.push, true);
        start = value.end;
      });
    } catch (error) {
      if (!(error instanceof RespError)) throw error;
      // Not RESP: the slot in line takes everything from here.
      const target = this.awaiting[0] ?? this.restSlot();
      target.rest = true;
      this.toSlot(target, data.subarray(start));
      return;
    }
    if (start < data.length) this.reply(data.subarray(start), this.replies.inPush, false);
  }

  /** Bytes of one reply (complete or not yet) from the server. */
  private reply(bytes: Buffer, push: boolean, complete: boolean): void {
    const target = this.awaiting[0];
    if (push || !target) {
      // Out of band (a RESP3 push), or a reply to no command of ours: straight to the client.
      this.socket.write(bytes);
      return;
    }
    this.toSlot(target, bytes);
    if (complete && !target.rest) {
      target.complete = true;
      this.awaiting.shift();
    }
  }

  private toSlot(slot: Slot, bytes: Buffer): void {
    if (bytes.length === 0) return;
    slot.held.push(bytes);
    this.heldBytes += bytes.length;
  }

  private restSlot(): Slot {
    const rest: Slot = { forwarded: true, complete: false, reply: 'pass', rest: true, held: [] };
    this.addSlot(rest);
    return rest;
  }

  /** Delivers what the slots first in line have, in order. */
  private flush(): void {
    while (this.slots.length > 0 && !this.done) {
      const head = this.slots[0]!;
      if (!head.forwarded) {
        if (!head.answer) return;
        this.socket.write(head.answer);
        this.slots.shift();
        continue;
      }
      for (const bytes of head.held) this.deliver(head, bytes);
      head.held = [];
      if (!head.complete || head.rest) return;
      if (head.reply === 'replace') this.socket.write(head.replacement!);
      if (head.cutAfter !== undefined) return this.cut();
      this.slots.shift();
    }
    if (this.serverEnded && this.awaiting.length === 0 && this.slots.length === 0) this.socket.end();
    this.drainIfFree();
  }

  private deliver(slot: Slot, bytes: Buffer): void {
    this.heldBytes -= bytes.length;
    if (slot.reply !== 'pass' || this.done) return;
    if (slot.cutAfter === undefined) {
      this.socket.write(bytes);
      return;
    }
    const part = bytes.subarray(0, slot.cutAfter);
    slot.cutAfter -= part.length;
    if (part.length > 0) this.socket.write(part);
    if (slot.cutAfter === 0 && bytes.length > part.length) this.cut();
  }

  /** connection_drop: what was to be delivered is out; the connection closes. */
  private cut(): void {
    this.socket.end(() => this.socket.destroy());
    this.done = true;
  }

  end(): void {
    this.serverEnded = true;
    this.flush();
  }

  closed(): void {
    // The server side is gone: a client waiting for replies is cut off, as by a real drop.
    closeAfterServer(this.socket, this.serverEnded && this.awaiting.length === 0);
  }

  private drainIfFree(): void {
    if (this.serverFull && this.heldBytes < MAX_HELD_REPLY_BYTES && !this.socket.writableNeedDrain) {
      this.serverFull = false;
      this.forwarder.upstream?.drained();
    }
  }

  private finish(): void {
    this.done = true;
    this.timers.clear();
    this.forwarder.close();
  }
}

/** A RESP error reply: `-ERR message` (a message that starts with its own code, e.g. "LOADING …", keeps it). */
export function respError(message: string | undefined, code = 'ERR'): Buffer {
  const text = (message ?? 'faultline injected error').replace(/[\r\n]+/g, ' ').trim() || 'faultline injected error';
  return Buffer.from(`-${/^[A-Z][A-Z0-9_-]*( |$)/.test(text) ? text : `${code} ${text}`}\r\n`);
}
