/**
 * The stdio proxy: spawns the MCP server, relays newline-delimited JSON-RPC both ways through a
 * PlaneSession, passes the server's stderr through. Every line is bounded (the plane's message
 * bound): a longer one is streamed through unread, or dropped with --strict, never held. The
 * server is spawned as a tracked process tree (process-group.ts): ending it ends whatever it
 * started too, setsid() daemons included. It is always ended: when the client closes stdin (its
 * stdin is closed, then after a grace period the whole tree gets SIGTERM, then SIGKILL), at once
 * when the signal aborts (a bound or a cancellation: only a short grace between SIGTERM and
 * SIGKILL), when the server itself exits (what it left running), and on process exit.
 *
 *   client stdin ─lines─▶ session.fromClient ─▶ child stdin
 *   client stdout ◀────── session.fromServer ◀─lines─ child stdout        child stderr ─▶ our stderr
 */
import type { ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { InputError } from '../kernel/errors.js';
import { LineReader, LineWriter } from '../jsonrpc/ndjson.js';
import { createIdScanner, type IdScanner, type MessageId } from '../jsonrpc/peek-id.js';
import { startProgram, type ProgramPolicy } from '../consent/index.js';
import { refuseInProduction } from '../production.js';
import type { JsonRpcMessage, ToolPlane } from './session.js';

/** Spawn errors that mean the command itself cannot run (a bad argument, not a failure of ours). */
const COMMAND_ERRORS = new Set(['ENOENT', 'EACCES', 'ENOTDIR']);

export interface StdioProxyOptions {
  /** Start even where the environment says production (--allow-production; src/production.ts). */
  allowProduction?: boolean;
  command: string;
  args: string[];
  /** Whether the server may be started (src/consent): the owner's policy at the shell, an agent's over MCP. */
  programs: ProgramPolicy;
  /** The argument that named command, for consent's refusals (default `command`). */
  argument?: string;
  plane: ToolPlane;
  input: Readable;
  output: Pick<Writable, 'write'>;
  /** Where the child's stderr goes (default: inherited). */
  stderr?: 'inherit' | 'pipe' | 'ignore';
  signal?: AbortSignal;
  /** Variables for the server over the policy's base environment. */
  env?: Record<string, string>;
  /** Grace period between closing the child's stdin, SIGTERM and SIGKILL (ms, default 2000). */
  graceMs?: number;
  /** Grace period between SIGTERM and SIGKILL once the signal aborted (ms, default 250). */
  abortGraceMs?: number;
  onChild?: (child: ChildProcess) => void;
}

export interface StdioProxyResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
}

export function runStdioProxy(options: StdioProxyOptions): Promise<StdioProxyResult> {
  // The production guard where tool-call faults are injected, before the server is started.
  try {
    refuseInProduction('start a tool-call fault proxy', options.allowProduction === true);
  } catch (error) {
    return Promise.reject(error);
  }
  const { plane } = options;
  const session = plane.session();
  // A tracked tree, so that stopping it also stops what it started (npx, sh -c …, daemons).
  const tree = startProgram(
    options.programs,
    {
      argument: options.argument ?? 'command',
      command: options.command,
      args: options.args,
      env: options.env,
      why: 'the MCP server behind the tool-call proxy',
    },
    { stdio: ['pipe', 'pipe', options.stderr ?? 'inherit'] },
  );
  const child = tree.child;
  options.onChild?.(child);
  const grace = options.graceMs ?? 2000;

  // Whole lines out, each side's; a long line streamed through keeps them from interleaving with it.
  const clientLines = new LineWriter(options.output);
  const serverLines = new LineWriter({
    write: (data: string | Uint8Array) => (child.stdin?.writable ? child.stdin.write(data) : true),
    once: (event: string, listener: () => void) => child.stdin!.once(event, listener),
  } as Pick<Writable, 'write' | 'once'>);
  const toClient = (message: JsonRpcMessage): void => clientLines.line(JSON.stringify(message));
  const toServer = (message: JsonRpcMessage): void => serverLines.line(JSON.stringify(message));

  const fromClient = boundedLines(options.input, serverLines, plane, {
    onLine: (line) => void session.fromClientText(line, toServer, toClient, (text) => serverLines.line(text)),
    // Already passed through (fail-safe) or dropped (strict) by now: only the accounting is left.
    onOversize: (id, problem) => session.clientUnreadable(id, problem, () => undefined, toClient),
  });
  const fromServer = boundedLines(child.stdout!, clientLines, plane, {
    onLine: (line) => void session.fromServerText(line, toClient, (text) => clientLines.line(text)),
    onOversize: (id, problem) => session.serverUnreadable(id, problem),
  });
  child.stdin?.on('error', () => undefined); // EPIPE when the child died first: the exit handler reports it

  let stopTimers: NodeJS.Timeout[] = [];
  /** We asked the child to stop (the client left, or a signal): its exit is then no failure. */
  let stopping = false;
  /** Ending the whole tree, once begun (by a stop, or by the server's own exit). */
  let ended: Promise<boolean> | undefined;
  const endTree = (graceMs: number): Promise<boolean> => (ended ??= tree.stop(graceMs));
  // The client left: the polite way first (end of stdin), the whole tree after the grace period.
  const stop = (): void => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    stopping = true;
    child.stdin?.end();
    stopTimers.push(setTimeout(() => void endTree(grace), grace));
  };
  // A bound or a cancellation: the tree is ended now, with only a short grace.
  const abort = (): void => {
    stopping = true;
    void endTree(options.abortGraceMs ?? 250);
  };
  fromClient.on('close', stop);
  options.signal?.addEventListener('abort', abort, { once: true });
  if (options.signal?.aborted) abort();

  return new Promise((resolve, reject) => {
    child.once('error', (error: NodeJS.ErrnoException) => {
      cleanup();
      tree.dispose();
      const message = `could not start ${options.command}: ${error.message}`;
      // No such program, or not one that may run: the command given is what is wrong.
      reject(COMMAND_ERRORS.has(error.code ?? '') ? new InputError(`command: ${message}`) : new Error(message));
    });
    // What the server started may outlive it, and hold its stdout open (so no 'close' would
    // come): once it exits, the rest of its tree gets SIGTERM, then SIGKILL after the grace
    // period, and then our ends of its pipes close whoever still holds theirs.
    child.once('exit', () => void endTree(stopping ? Math.min(grace, options.abortGraceMs ?? 250) : grace));
    child.once('close', (exitCode, signal) => {
      // Before cleanup closes the session, so the calls in flight count as found no server.
      if (!stopping) plane.upstreamExited(exitCode, signal);
      cleanup();
      void endTree(0).finally(() => resolve({ exitCode, signal }));
    });
    function cleanup(): void {
      for (const timer of stopTimers) clearTimeout(timer);
      stopTimers = [];
      options.signal?.removeEventListener('abort', abort);
      fromClient.close();
      fromServer.close();
      session.close();
    }
  });
}

/**
 * Newline-delimited messages from one side, bounded per line. A line beyond the plane's bound is
 * never held: fail-safe passes it through to the other side piece by piece, strict drops it;
 * either way its id is found on the way (without parsing) and `onOversize` is told.
 */
function boundedLines(
  input: Readable,
  passTo: LineWriter,
  plane: ToolPlane,
  handlers: { onLine(line: string): void; onOversize(id: MessageId | undefined, problem: string): void },
): LineReader {
  let scanner: IdScanner = createIdScanner();
  const maxBytes = plane.limits.maxChars; // a character is at least one byte: this bounds the characters too
  // Backpressure: while the other side's output is full, this side is not read.
  let paused = false;
  const holdIfFull = (): void => {
    if (paused || !passTo.isFull) return;
    paused = true;
    input.pause();
    passTo.whenDrained(() => {
      paused = false;
      if (!closed) input.resume();
    });
  };
  let closed = false;
  const reader = new LineReader(input, {
    maxBytes,
    onLine: (line) => {
      if (line.trim() !== '') handlers.onLine(line);
      holdIfFull();
    },
    oversizeStart: () => {
      scanner = createIdScanner();
      if (!plane.strict) passTo.streamStart();
    },
    oversizeChunk: (bytes) => {
      scanner.feed(bytes);
      if (!plane.strict) passTo.streamChunk(bytes);
      holdIfFull();
    },
    oversizeEnd: (bytes) => {
      if (!plane.strict) passTo.streamEnd();
      handlers.onOversize(scanner.id, `a message of ${bytes} bytes, above the ${maxBytes} accepted`);
    },
  });
  reader.once('close', () => (closed = true));
  return reader;
}
