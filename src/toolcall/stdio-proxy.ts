/**
 * The stdio proxy: spawns the MCP server, relays newline-delimited JSON-RPC both ways through a
 * PlaneSession, passes the server's stderr through. The server is spawned as a tracked process
 * tree (process-group.ts): ending it ends whatever it started too, setsid() daemons included. It
 * is always ended: when the client closes stdin (its stdin is closed, then after a grace period
 * the whole tree gets SIGTERM, then SIGKILL), at once when the signal aborts (a bound or a
 * cancellation: only a short grace between SIGTERM and SIGKILL), when the server itself exits
 * (what it left running), and on process exit.
 *
 *   client stdin ─lines─▶ session.fromClient ─▶ child stdin
 *   client stdout ◀────── session.fromServer ◀─lines─ child stdout        child stderr ─▶ our stderr
 */
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { ToolInputError } from '../errors.js';
import { spawnTree } from '../process-group.js';
import type { JsonRpcMessage, ToolPlane } from './session.js';

/** Spawn errors that mean the command itself cannot run (a bad argument, not a failure of ours). */
const COMMAND_ERRORS = new Set(['ENOENT', 'EACCES', 'ENOTDIR']);

export interface StdioProxyOptions {
  command: string;
  args: string[];
  plane: ToolPlane;
  input: Readable;
  output: Pick<Writable, 'write'>;
  /** Where the child's stderr goes (default: inherited). */
  stderr?: 'inherit' | 'pipe' | 'ignore';
  signal?: AbortSignal;
  env?: NodeJS.ProcessEnv;
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
  const { plane } = options;
  const session = plane.session();
  // A tracked tree, so that stopping it also stops what it started (npx, sh -c …, daemons).
  const tree = spawnTree(options.command, options.args, { stdio: ['pipe', 'pipe', options.stderr ?? 'inherit'], env: options.env ?? process.env });
  const child = tree.child;
  options.onChild?.(child);
  const grace = options.graceMs ?? 2000;

  const toClient = (message: JsonRpcMessage): void => {
    options.output.write(JSON.stringify(message) + '\n');
  };
  const toServer = (message: JsonRpcMessage): void => {
    if (child.stdin?.writable) child.stdin.write(JSON.stringify(message) + '\n');
  };

  const fromClient = createInterface({ input: options.input, crlfDelay: Infinity });
  fromClient.on('line', (line) => {
    const message = parse(line);
    if (!message) {
      if (line.trim() !== '' && child.stdin?.writable) child.stdin.write(line + '\n'); // not ours to judge
      return;
    }
    void session.fromClient(message, toServer, toClient);
  });
  const fromServer = createInterface({ input: child.stdout!, crlfDelay: Infinity });
  fromServer.on('line', (line) => {
    const message = parse(line);
    if (!message) {
      options.output.write(line + '\n');
      return;
    }
    void session.fromServer(message, toClient);
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
      reject(COMMAND_ERRORS.has(error.code ?? '') ? new ToolInputError(`command: ${message}`) : new Error(message));
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

function parse(line: string): JsonRpcMessage | undefined {
  if (!line.trimStart().startsWith('{')) return undefined;
  try {
    const value = JSON.parse(line) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonRpcMessage) : undefined;
  } catch {
    return undefined;
  }
}
