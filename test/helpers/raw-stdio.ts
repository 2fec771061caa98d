/**
 * A raw JSON-RPC peer over the server's stdio, for what the SDK client cannot send: malformed
 * lines, unknown methods, arbitrary arguments. Responses are matched by id.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { cliPath } from './repo.js';

export interface RawServer {
  /** Writes one raw line (a newline is added). */
  writeLine(line: string): void;
  /** Sends a request and resolves with its response (the whole JSON-RPC object). */
  request(method: string, params?: unknown, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Resolves with the next response whose id is null (answers to unreadable messages). */
  nextNullIdResponse(timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Every stdout line so far. */
  stdoutLines(): string[];
  stderr(): string;
  /** Whether the process is still running. */
  alive(): boolean;
  close(): Promise<void>;
}

export async function spawnRawServer(args: string[] = ['mcp'], env: Record<string, string> = {}): Promise<RawServer> {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, [cliPath, ...args], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const waiting = new Map<string | number | null, Array<(message: Record<string, unknown>) => void>>();
  const unclaimed: Record<string, unknown>[] = [];
  let stderr = '';
  let partial = '';
  let exited = false;
  child.on('exit', () => {
    exited = true;
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  child.stdout.on('data', (chunk: Buffer) => {
    partial += chunk.toString('utf8');
    const parts = partial.split('\n');
    partial = parts.pop() ?? '';
    for (const line of parts) {
      lines.push(line);
      let message: Record<string, unknown>;
      try {
        message = JSON.parse(line) as Record<string, unknown>;
      } catch {
        continue;
      }
      const id = (message.id ?? null) as string | number | null;
      const queue = waiting.get(id);
      const resolve = queue?.shift();
      if (resolve) resolve(message);
      else unclaimed.push(message);
    }
  });
  let nextId = 1;
  const waitFor = (id: string | number | null, timeoutMs: number): Promise<Record<string, unknown>> => {
    const index = unclaimed.findIndex((message) => (message.id ?? null) === id);
    if (index !== -1) return Promise.resolve(unclaimed.splice(index, 1)[0]!);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no response for id ${String(id)} within ${timeoutMs} ms`)),
        timeoutMs,
      );
      const queue = waiting.get(id) ?? [];
      queue.push((message) => {
        clearTimeout(timer);
        resolve(message);
      });
      waiting.set(id, queue);
    });
  };
  const server: RawServer = {
    writeLine: (line) => child.stdin.write(line + '\n'),
    request(method, params, timeoutMs = 60_000) {
      const id = nextId++;
      child.stdin.write(
        JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) }) + '\n',
      );
      return waitFor(id, timeoutMs);
    },
    nextNullIdResponse: (timeoutMs = 60_000) => waitFor(null, timeoutMs),
    stdoutLines: () => [...lines],
    stderr: () => stderr,
    alive: () => !exited && child.exitCode === null,
    close: () =>
      new Promise((resolve) => {
        if (exited) return resolve();
        child.once('exit', () => resolve());
        child.stdin.end();
        setTimeout(() => child.kill('SIGKILL'), 5000).unref();
      }),
  };
  const init = await server.request('initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'raw-test', version: '0' },
  });
  if (!init.result) throw new Error(`initialize failed: ${JSON.stringify(init)}`);
  server.writeLine(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  return server;
}
