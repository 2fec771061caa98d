/** Spawn-to-exit time of a Node process, with the environment an MCP client gives the servers it starts. */
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';

/** Milliseconds from spawn to exit of `node ...args`. */
export function timeProcess(args: string[]): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: 'ignore', env: getDefaultEnvironment() });
    child.once('error', reject);
    child.once('exit', () => resolve(performance.now() - started));
  });
}
