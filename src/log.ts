/**
 * The one logger. It writes to stderr or to a file, never to stdout: in stdio mode stdout carries
 * the MCP protocol and a single stray line breaks the client.
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { format } from 'node:util';

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'off'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const RANK: Record<LogLevel, number> = { trace: 0, debug: 1, info: 2, warn: 3, error: 4, off: 5 };

export interface Logger {
  trace(message: string, ...args: unknown[]): void;
  debug(message: string, ...args: unknown[]): void;
  info(message: string, ...args: unknown[]): void;
  warn(message: string, ...args: unknown[]): void;
  error(message: string, ...args: unknown[]): void;
  /** Flushes and closes the log file, if any. */
  close(): Promise<void>;
}

export interface LoggerOptions {
  level: LogLevel;
  /** Append to this file instead of writing to stderr. */
  file?: string | undefined;
}

/**
 * stderr can go away (the client closed the pipe). Writing to it then fails with EPIPE, and an
 * unhandled stream error would become an uncaught exception that is itself logged to stderr:
 * a busy loop. So a broken stderr is noted once and logging to it stops.
 */
let stderrBroken = false;
process.stderr.on('error', () => {
  stderrBroken = true;
});

function writeStderr(line: string): void {
  if (!stderrBroken) process.stderr.write(line);
}

export function createLogger({ level, file }: LoggerOptions): Logger {
  const threshold = RANK[level];
  let stream: WriteStream | undefined;
  if (file) {
    stream = createWriteStream(file, { flags: 'a' });
    // A log file that cannot be written must not take the server down: fall back to stderr.
    stream.on('error', (error) => {
      writeStderr(`faultline: cannot write log file ${file}: ${error.message}\n`);
      stream = undefined;
    });
  }
  const write = (lvl: LogLevel, message: string, args: unknown[]): void => {
    if (RANK[lvl] < threshold) return;
    const line = `${new Date().toISOString()} ${lvl.toUpperCase().padEnd(5)} ${format(message, ...args)}\n`;
    if (stream) stream.write(line);
    else writeStderr(line);
  };
  return {
    trace: (m, ...a) => write('trace', m, a),
    debug: (m, ...a) => write('debug', m, a),
    info: (m, ...a) => write('info', m, a),
    warn: (m, ...a) => write('warn', m, a),
    error: (m, ...a) => write('error', m, a),
    close: () =>
      new Promise<void>((resolve) => {
        if (!stream) return resolve();
        stream.end(resolve);
      }),
  };
}

/** A logger that drops everything, for tests and library use. */
export const silentLogger: Logger = createLogger({ level: 'off' });
