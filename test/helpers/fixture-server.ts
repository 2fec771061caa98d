/** A fixture HTTP server the test starts as a child process, once it says where it listens. */
import { spawn, type ChildProcess } from 'node:child_process';

/**
 * Runs `node script` with `env` (HTTP=1 added) and resolves with the URL from its
 * "listening on URL" line on stderr; the caller kills `child`.
 */
export async function startFixtureServer(
  script: string,
  env: Record<string, string>,
): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [script], {
    env: { ...process.env, ...env, HTTP: '1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let err = '';
    const timer = setTimeout(() => reject(new Error(`no listen line: ${err}`)), 60_000);
    child.stderr!.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      const match = /listening on (\S+)/.exec(err);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
  });
  return { url, child };
}
