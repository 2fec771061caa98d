/**
 * MCP start-up as a client sees it, timed without any client library: spawn a server on stdio,
 * write `initialize`, read its answer, write `notifications/initialized` and `tools/list`, read
 * that answer. What this measures is the server's side only (process start, module loading,
 * building the tools, answering); an SDK client adds its own work on top (see bench/startup.ts).
 * Shared by bench/startup.ts and bench/checks/startup.ts.
 *
 * The server gets the environment the SDK's stdio client gives the servers it spawns (PATH, HOME
 * and the like), as an MCP client would: this shell's NODE_EXTRA_CA_CERTS alone adds some 60 ms
 * to every Node start, the same to both servers, which would make any ratio look closer to 1.
 */
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';

export interface StartupTiming {
  /** Milliseconds from spawn to the initialize answer. */
  initializeMs: number;
  /** Milliseconds from spawn to the tools/list answer. */
  toolsListMs: number;
  /** How many tools the answer listed (so a server that lists nothing cannot look fast). */
  tools: number;
  /**
   * CPU ms the server had used when it answered tools/list: its main thread's and its other threads' (worker
   * threads, V8's compiler and GC helpers, libuv's pool); undefined where there is no /proc.
   */
  cpuMs?: { main: number; others: number };
}

/** CPU ms so far of process `pid`'s main thread and of its other threads (scheduler run time), or undefined. */
function threadsCpuMs(pid: number | undefined): { main: number; others: number } | undefined {
  if (pid === undefined) return undefined;
  try {
    let main = 0;
    let others = 0;
    for (const id of readdirSync(`/proc/${pid}/task`)) {
      try {
        const ms = Number(readFileSync(`/proc/${pid}/task/${id}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
        if (id === String(pid)) main = ms;
        else others += ms;
      } catch {
        // The thread ended while read.
      }
    }
    return { main, others };
  } catch {
    return undefined; // not Linux
  }
}

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'startup-timer', version: '0.0.0' } },
};

/**
 * Spawns `node ...args` (with `env` added to a client's environment), times initialize and tools/list, then closes
 * stdin and waits for exit.
 */
export function timeRawStartup(
  args: string[],
  timeoutMs = 30_000,
  env: Record<string, string> = {},
): Promise<StartupTiming> {
  const started = performance.now();
  const child = spawn(process.execPath, args, {
    stdio: ['pipe', 'pipe', 'ignore'],
    env: { ...getDefaultEnvironment(), ...env },
  });
  return new Promise<StartupTiming>((resolve, reject) => {
    let initializeMs = 0;
    let partial = '';
    const timer = setTimeout(() => fail(new Error(`no tools/list answer within ${timeoutMs} ms`)), timeoutMs);
    const fail = (error: Error): void => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error);
    };
    child.once('error', fail);
    child.once('exit', (code) => fail(new Error(`server exited (${code}) before answering tools/list`)));
    child.stdout.on('data', (chunk: Buffer) => {
      partial += chunk.toString('utf8');
      const lines = partial.split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        let message: { id?: unknown; result?: { tools?: unknown[] } };
        try {
          message = JSON.parse(line) as typeof message;
        } catch {
          continue;
        }
        if (message.id === 1) {
          initializeMs = performance.now() - started;
          child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
          child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' })}\n`);
        } else if (message.id === 2) {
          const toolsListMs = performance.now() - started;
          const cpuMs = threadsCpuMs(child.pid);
          clearTimeout(timer);
          child.removeAllListeners('exit');
          const tools = message.result?.tools?.length ?? 0;
          child.once('exit', () => resolve({ initializeMs, toolsListMs, tools, ...(cpuMs ? { cpuMs } : {}) }));
          child.stdin.end();
          // A server that ignores stdin closing must not hang the caller.
          setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
        }
      }
    });
    child.stdin.write(`${JSON.stringify(INITIALIZE)}\n`);
  });
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
