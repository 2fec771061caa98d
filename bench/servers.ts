/**
 * The servers the proxy benchmarks compare, each in a process of its own (so no two share an
 * event loop with each other or with the load generator), and the peers they install.
 *
 *   node dist/bench/servers.js KIND [UPSTREAM_PORT] [ARG]  → prints {"port": N}, serves until stdin ends
 *
 * KIND: upstream (node:http answering "ok"), bare-http-proxy (node:http server + http.request
 * with a keep-alive agent, piping both ways), http-mapping (faultline's HTTP mapping, no fault),
 * tcp-latency (faultline TCP mapping with a latency fault of ARG ms on responses),
 * simple-latency (a 12-line setTimeout proxy delaying responses ARG ms).
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startProxy } from '../src/proxy/index.js';

export interface Served {
  port: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Starts `kind` in a child process and resolves with its port. */
export function serve(kind: string, ...args: Array<string | number>): Promise<Served> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), kind, ...args.map(String)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let text = '';
    child.once('exit', (code) => reject(new Error(`${kind} exited (${code}) before listening`)));
    child.stdout!.on('data', (data: Buffer) => {
      text += data.toString();
      if (!text.includes('\n')) return;
      const { port } = JSON.parse(text.split('\n')[0]!) as { port: number };
      resolve({
        port,
        child,
        stop: () =>
          new Promise((done) => {
            child.once('exit', () => done());
            child.stdin!.end();
          }),
      });
    });
  });
}

/**
 * nginx as a reverse proxy to `upstreamPort` (one worker, keep-alive to the upstream), the fastest
 * peer; undefined when nginx is missing and cannot be installed.
 */
export async function serveNginx(upstreamPort: number): Promise<Served | undefined> {
  if (!ensureCommand('nginx', 'nginx-light')) return undefined;
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'faultline-bench-nginx-'));
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
    .map((kind) => `${kind}_temp_path ${dir}/${kind};`)
    .join(' ');
  writeFileSync(
    join(dir, 'nginx.conf'),
    `worker_processes 1; daemon off; pid ${dir}/nginx.pid; error_log stderr error;
events { worker_connections 1024; }
http { access_log off; ${temp}
  upstream up { server 127.0.0.1:${upstreamPort}; keepalive 32; }
  server { listen 127.0.0.1:${port}; location / { proxy_pass http://up; proxy_http_version 1.1; proxy_set_header Connection ""; } } }
`,
  );
  const child = spawn('nginx', ['-p', dir, '-c', join(dir, 'nginx.conf')], { stdio: ['ignore', 'ignore', 'inherit'] });
  for (let tries = 0; tries < 100; tries++) {
    const up = await new Promise<boolean>((resolve) =>
      net
        .connect({ port, host: '127.0.0.1' }, function (this: net.Socket) {
          this.destroy();
          resolve(true);
        })
        .once('error', () => resolve(false)),
    );
    if (up) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    port,
    child,
    stop: () =>
      new Promise((done) => {
        child.once('exit', () => {
          rmSync(dir, { recursive: true, force: true });
          done();
        });
        child.kill('SIGQUIT');
      }),
  };
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  const port = await listening(server);
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Makes sure a Debian package's command is there (installing the package when it is not); false when it cannot be. */
export function ensureCommand(command: string, debianPackage: string): boolean {
  const present = (): boolean => spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;
  if (present()) return true;
  process.stderr.write(`${command} is missing: apt-get install -y ${debianPackage}\n`);
  try {
    execFileSync(
      'sh',
      [
        '-c',
        `apt-get install -y -qq ${debianPackage} >/dev/null 2>&1 || ` +
          `(apt-get update -qq && apt-get install -y -qq ${debianPackage} ` +
          `>/dev/null)`,
      ],
      { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } },
    );
  } catch {
    return false;
  }
  return present();
}

export const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1]!;

export function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

async function listening(server: net.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as net.AddressInfo).port;
}

async function start(kind: string, upstreamPort: number, arg: number): Promise<number> {
  switch (kind) {
    case 'upstream':
      return listening(
        http.createServer((_req, res) => {
          res.setHeader('content-type', 'text/plain');
          res.end('ok');
        }),
      );
    case 'bare-http-proxy': {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
      return listening(
        http.createServer((req, res) => {
          const forward = http.request(
            { host: '127.0.0.1', port: upstreamPort, method: req.method, path: req.url, headers: req.headers, agent },
            (answer) => {
              res.writeHead(answer.statusCode ?? 502, answer.headers);
              answer.pipe(res);
            },
          );
          forward.on('error', () => res.destroy());
          req.pipe(forward);
        }),
      );
    }
    case 'http-mapping':
      return (await startProxy({ mappings: [`0=127.0.0.1:${upstreamPort}`], http: true })).ports[0]!;
    case 'tcp-latency':
      return (
        await startProxy({ mappings: [`0=127.0.0.1:${upstreamPort}`], faults: [{ type: 'latency', latencyMs: arg }] })
      ).ports[0]!;
    case 'simple-latency':
      // The yardstick: every response chunk written `arg` ms after it arrived.
      return listening(
        net.createServer((client) => {
          const upstream = net.connect({ port: upstreamPort, host: '127.0.0.1' });
          client.setNoDelay(true);
          upstream.setNoDelay(true);
          client.on('data', (data) => upstream.write(data));
          upstream.on('data', (data) => setTimeout(() => client.write(data), arg));
          client.on('close', () => upstream.destroy());
          upstream.on('close', () => client.destroy());
          client.on('error', () => upstream.destroy());
          upstream.on('error', () => client.destroy());
        }),
      );
    default:
      throw new Error(`unknown server kind ${kind}`);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [kind = '', upstreamPort = '0', arg = '0'] = process.argv.slice(2);
  const port = await start(kind, Number(upstreamPort), Number(arg));
  process.stdout.write(`${JSON.stringify({ port })}\n`);
  process.stdin.resume();
  process.stdin.on('end', () => process.exit(0));
}
