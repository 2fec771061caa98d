/**
 * What the runner itself does to observe: one HTTP check (a request, bounded in time and size,
 * through the target policy's lookup) and one command run to its end (a tracked process tree,
 * ended with everything it started at its timeout or when the run stops; its output kept bounded).
 */
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { startProgram, type ProgramPolicy, type ProgramRequest } from '../consent/index.js';
import { messageOf } from '../kernel/errors.js';
import type { CommandSpec, HttpCheck } from './model.js';
import type { Observation } from './predicate.js';

/** The most of an answer's body a check reads (a predicate needs the start of it at most). */
export const MAX_CHECK_BODY = 1024 * 1024;
/** The most of a command's output kept (its tail) for the report. */
export const MAX_COMMAND_OUTPUT = 16 * 1024;

export function observe(check: HttpCheck, lookup: LookupFunction, signal: AbortSignal): Promise<Observation> {
  const started = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    const done = (observation: Omit<Observation, 'latencyMs'>): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve({ ...observation, latencyMs: performance.now() - started });
    };
    const url = new URL(check.url);
    const body = check.body === '' ? undefined : Buffer.from(check.body);
    const request = (url.protocol === 'https:' ? https : http).request(url, {
      method: check.method,
      headers: { ...check.headers, ...(body ? { 'content-length': body.length } : {}), connection: 'close' },
      lookup,
      agent: false,
    });
    const fail = (error: string): void => {
      done({ status: 0, headers: {}, body: '', error });
      request.destroy();
    };
    const timer = setTimeout(() => fail(`no answer within ${check.timeoutMs} ms`), check.timeoutMs);
    const onAbort = (): void => fail('the run stopped');
    signal.addEventListener('abort', onAbort, { once: true });
    request.on('error', (error: NodeJS.ErrnoException) => fail(error.code ?? error.message));
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        if (size >= MAX_CHECK_BODY) return;
        chunks.push(chunk.subarray(0, MAX_CHECK_BODY - size));
        size += chunk.length;
      });
      response.on('error', (error) => fail(messageOf(error)));
      response.on('end', () => {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(response.headers))
          if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
        done({ status: response.statusCode ?? 0, headers, body: Buffer.concat(chunks).toString('utf8') });
      });
    });
    request.end(body);
  });
}

export interface CommandOutcome {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  /** Set when it could not be started (ENOENT, EACCES). */
  startError?: string;
  durationMs: number;
  /** The tail of stdout and stderr together. */
  output: string;
}

/** The program a command spec starts, as the consent check sees it. */
export function commandRequest(spec: CommandSpec, why: string): ProgramRequest {
  const [command, args] =
    typeof spec.command === 'string' ? ['/bin/sh', ['-c', spec.command]] : [spec.command[0]!, spec.command.slice(1)];
  return { argument: spec.argument, command, args, cwd: spec.cwd, env: spec.env, why };
}

/**
 * Runs the command to its end, its tree ended at `timeoutMs` (default the spec's) or when the
 * signal aborts. Refused (an InputError naming the argument) when `programs` does not allow it.
 */
export async function runCommandSpec(
  spec: CommandSpec,
  signal: AbortSignal,
  programs: ProgramPolicy,
  why: string,
  timeoutMs = spec.timeoutMs,
  /** Also given each chunk of output as it comes (the outcome keeps only the tail). */
  onOutput?: (chunk: Buffer) => void,
): Promise<CommandOutcome> {
  const started = performance.now();
  const tree = startProgram(programs, commandRequest(spec, why), { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve) => {
    const child = tree.child;
    let output = '';
    let timedOut = false;
    let startError: string | undefined;
    const keep = (chunk: Buffer): void => {
      output = (output + chunk.toString('utf8')).slice(-MAX_COMMAND_OUTPUT);
      onOutput?.(chunk);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    // SIGTERM to the whole tree; what ignores it is killed 2 s later.
    const stop = (): void => void tree.stop(2000);
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, timeoutMs);
    const onAbort = (): void => stop();
    signal.addEventListener('abort', onAbort, { once: true });
    child.on('error', (error: NodeJS.ErrnoException) => {
      startError = error.code ?? error.message;
    });
    child.on('close', (exitCode, exitSignal) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      // Whatever the command started is not left behind.
      void tree.stop(0).then(() => {
        resolve({
          exitCode,
          signal: exitSignal,
          timedOut,
          ...(startError ? { startError } : {}),
          durationMs: performance.now() - started,
          output,
        });
      });
    });
    if (signal.aborted) stop();
  });
}
