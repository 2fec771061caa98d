/**
 * HTTP mapping throughput beside a bare node:http reverse proxy, in one run: small keep-alive
 * exchanges per second through each, measured by wrk, rounds interleaved. Every server runs in a
 * process of its own (bench/servers.ts). Used by bench/http-mapping.ts (the fuller report) and
 * bench/checks/proxy.ts (proxy.http-mapping).
 */
import { execFile } from 'node:child_process';
import { ensureCommand, serve, serveNginx, type Served } from '../servers.js';

export interface HttpMappingOptions {
  rounds: number;
  seconds: number;
  connections: number;
  /** Also measure nginx as a reverse proxy (installed when missing). */
  nginx: boolean;
}

/** Requests/s per target ("direct", "bare node proxy", "http mapping", and "nginx" when asked and available), one
 * sample per round. */
export type HttpMappingSamples = Record<string, number[]>;

function wrk(port: number, seconds: number, connections: number): Promise<number> {
  return new Promise((resolve, reject) => {
    execFile(
      'wrk',
      ['-t1', `-c${connections}`, `-d${seconds}s`, `http://127.0.0.1:${port}/`],
      { timeout: (seconds + 30) * 1000 },
      (error, stdout) => {
        const rate = /Requests\/sec:\s+([\d.]+)/.exec(String(stdout));
        if (error || !rate) reject(new Error(`wrk failed: ${error?.message ?? stdout}`));
        else resolve(Number(rate[1]));
      },
    );
  });
}

/** Throws when wrk is missing and cannot be installed. */
export async function measureHttpMapping(options: HttpMappingOptions): Promise<HttpMappingSamples> {
  if (!ensureCommand('wrk', 'wrk')) throw new Error('wrk is needed and could not be installed (Debian package wrk)');
  const started: Served[] = [];
  try {
    const upstream = await serve('upstream');
    started.push(upstream);
    const targets: Record<string, Served> = {
      direct: upstream,
      'bare node proxy': await serve('bare-http-proxy', upstream.port),
      'http mapping': await serve('http-mapping', upstream.port),
    };
    started.push(targets['bare node proxy']!, targets['http mapping']!);
    const nginx = options.nginx ? await serveNginx(upstream.port) : undefined;
    if (nginx) {
      targets['nginx'] = nginx;
      started.push(nginx);
    }
    const samples: HttpMappingSamples = Object.fromEntries(Object.keys(targets).map((name) => [name, []]));
    for (const served of Object.values(targets)) await wrk(served.port, 1, options.connections); // warm-up
    for (let round = 0; round < options.rounds; round++) {
      for (const [name, served] of Object.entries(targets))
        samples[name]!.push(await wrk(served.port, options.seconds, options.connections));
    }
    return samples;
  } finally {
    await Promise.all(started.map((served) => served.stop()));
  }
}
