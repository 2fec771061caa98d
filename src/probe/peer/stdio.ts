/**
 * A probe peer over stdio: the server is a child process tree the peer spawns (process-group.ts)
 * and always ends, setsid() daemons and all; its stdout is read line by line within PEER_BOUNDS.
 */
import { describeOversize, LineSplitter, type OversizeLine } from '../../jsonrpc/ndjson.js';
import type { ProcessTree } from '../../process-group.js';
import { startProgram, type ProgramPolicy } from '../../consent/index.js';
import { PEER_BOUNDS, sizeText } from '../limits.js';
import {
  BasePeer,
  refOf,
  until,
  within,
  type CloseOptions,
  type Peer,
  type Reply,
  type RequestOptions,
  type StdioTarget,
} from './base.js';

/** After its time is up, a stdio server still gets this long between SIGTERM and SIGKILL. */
export const STOP_GRACE_MS = 250;
/** At most: the polite wait after closing stdin, then the wait after SIGTERM before SIGKILL. */
const POLITE_GRACE_MS = 1500;
const TERM_GRACE_MS = 1000;
const STDERR_TAIL_CHARS = 8000;

export class StdioPeer extends BasePeer implements Peer {
  private readonly tree: ProcessTree;
  private exited = false;
  private stderr = '';
  private spawnError: string | undefined;
  private readonly exitedPromise: Promise<void>;
  private bytesRead = 0;
  private reaped: Promise<void> | undefined;

  constructor(
    readonly target: StdioTarget,
    programs: ProgramPolicy,
    stop?: AbortSignal,
  ) {
    super(stop);
    this.tree = startProgram(
      programs,
      {
        argument: target.argument ?? 'command',
        command: target.command,
        args: target.args,
        cwd: target.cwd,
        env: target.env,
        why: 'the MCP server under probe',
      },
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    const child = this.tree.child;
    this.exitedPromise = new Promise((resolve) => {
      const done = (why: string): void => {
        if (this.exited) return;
        this.exited = true;
        this.note('!', why);
        this.closedNow();
        resolve();
      };
      child.once('exit', (code, signal) => done(`process exited (code ${String(code)}, signal ${String(signal)})`));
      child.once('error', (error) => {
        if (child.pid === undefined) this.spawnError = error.message;
        done(`process could not run: ${error.message}`);
      });
    });
    child.stdin!.on('error', () => undefined);
    child.stderr!.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString('utf8', Math.max(0, chunk.length - STDERR_TAIL_CHARS))).slice(
        -STDERR_TAIL_CHARS,
      );
    });
    const lines = new LineSplitter({
      maxBytes: PEER_BOUNDS.messageBytes,
      onLine: (line) => this.line(line),
      ...describeOversize((line) => this.oversize(line)),
    });
    child.stdout!.on('data', (chunk: Buffer) => {
      this.bytesRead += chunk.length;
      if (this.bytesRead > PEER_BOUNDS.peerBytes) return this.flooded();
      lines.feed(chunk);
    });
    child.stdout!.on('end', () => lines.end());
  }

  private line(text: string): void {
    if (text.trim() === '') return;
    const start = text.trimStart()[0];
    // What does not even try to be JSON is stdout pollution (a log line); JSON that cannot be read is an unreadable
    // message.
    if (start !== '{' && start !== '[') {
      this.note('<', text);
      this.polluted(text);
      return;
    }
    this.receiveText(text);
  }

  protected override foreign(text: string): void {
    this.note('<', text);
    this.polluted(text);
  }

  private oversize(line: OversizeLine): void {
    this.unreadableMessage(
      `a line of ${sizeText(line.bytes)}, over the probe's bound of ${sizeText(PEER_BOUNDS.messageBytes)} per message`,
      'bound',
      `${line.head}…${line.tail}`,
    );
  }

  /** More than the server may send in all: it is stopped, and what waits for it ends as closed. */
  private flooded(): void {
    if (this.reaped) return;
    this.note('!', `the server wrote more than ${sizeText(PEER_BOUNDS.peerBytes)} to stdout; the probe stopped it`);
    this.unreadable.push({
      problem:
        `more than ${sizeText(PEER_BOUNDS.peerBytes)} on stdout in one ` +
        `session, the probe's bound per session (it stopped the server)`,
      kind: 'bound',
      excerpt: '',
    });
    void this.close({ deadline: Date.now() });
  }

  protected sendText(text: string, ref?: string): void {
    this.note('>', text, ref);
    if (!this.exited && this.tree.child.stdin!.writable) this.tree.child.stdin!.write(text + '\n');
  }

  alive(): boolean {
    return !this.exited && this.reaped === undefined;
  }

  sessionId(): undefined {
    return undefined;
  }

  stderrTail(): string {
    return this.stderr;
  }

  startError(): string | undefined {
    return this.spawnError;
  }

  async request(method: string, params: unknown, timeoutMs: number, options: RequestOptions = {}): Promise<Reply> {
    this.throwIfStopped();
    const { id, text } = this.requestText(method, params, options);
    this.sendText(text, refOf(id));
    return this.waitFor(id, timeoutMs, { maxMs: options.maxMs });
  }

  async notify(method: string, params?: unknown): Promise<void> {
    this.throwIfStopped();
    const requestId = (params as { requestId?: unknown } | undefined)?.requestId;
    this.sendText(
      JSON.stringify({ jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }) }),
      requestId === undefined ? undefined : refOf(requestId),
    );
  }

  async sendRaw(text: string, timeoutMs: number, awaitId: number | string | null = null): Promise<Reply> {
    this.throwIfStopped();
    this.sendText(text, refOf(awaitId));
    return this.waitFor(awaitId, timeoutMs);
  }

  /**
   * End stdin (the polite way to stop a stdio server), then end the whole tree: SIGTERM, then
   * SIGKILL — also when the command itself already exited, for what it started. The polite wait
   * lasts until options.deadline at most; SIGTERM always gets STOP_GRACE_MS.
   */
  close(options: CloseOptions = {}): Promise<void> {
    this.reaped ??= this.reap(options.deadline);
    return this.reaped;
  }

  private async reap(deadline: number | undefined): Promise<void> {
    if (!this.exited) this.tree.child.stdin!.end();
    const politeEnd = Date.now() + until(deadline, POLITE_GRACE_MS);
    if (politeEnd > Date.now()) {
      await within(this.exitedPromise, politeEnd - Date.now());
      if (await this.tree.gone(Math.max(0, politeEnd - Date.now()))) return this.release();
    }
    await this.tree.stop(Math.max(STOP_GRACE_MS, until(deadline, TERM_GRACE_MS)));
    this.release();
  }

  /** Nothing of the tree runs any more: our ends of its pipes go too, and so does every wait. */
  private release(): void {
    this.tree.dispose();
    this.closedNow();
  }
}
