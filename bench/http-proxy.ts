/**
 * HTTP mapping benchmark: small keep-alive HTTP exchanges per second (closed loop, autocannon,
 * BENCH_HTTP_CONNECTIONS connections, default 10) through, side by side in one run:
 *
 *   direct            the upstream itself (a node:http server answering "ok")
 *   bare node proxy   node:http server + http.request with a keep-alive agent, piping both ways
 *   tcp mapping       faultline's plain TCP mapping (no fault)
 *   http mapping      faultline's HTTP mapping (requests parsed, no fault)
 *   http + 2 faults   the HTTP mapping with two HTTP faults that never match (the cost of the chain)
 *
 * The servers run in a child process so the load generator does not share their event loop.
 * Rounds are interleaved (BENCH_HTTP_ROUNDS, default 3, BENCH_HTTP_SECONDS each, default 3) and
 * the median of each is reported. Goal: http mapping ≥ 80% of the bare node proxy.
 *
 * Run: npx tsc -p . && node dist/bench/http-proxy.js
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { startProxy } from '../src/proxy/index.js';

const out = (line = ''): void => void process.stdout.write(`${line}\n`);

async function serve(): Promise<void> {
  const upstream = http.createServer((_req, res) => {
    res.setHeader('content-type', 'text/plain');
    res.end('ok');
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const upstreamPort = (upstream.address() as AddressInfo).port;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const bare = http.createServer((req, res) => {
    const forward = http.request(
      { host: '127.0.0.1', port: upstreamPort, method: req.method, path: req.url, headers: req.headers, agent },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
  const tcp = await startProxy({ mappings: [`0=127.0.0.1:${upstreamPort}`] });
  const httpMapping = await startProxy({ mappings: [`0=127.0.0.1:${upstreamPort}`], http: true });
  const withFaults = await startProxy({
    mappings: [`0=127.0.0.1:${upstreamPort}`],
    http: true,
    httpFaults: [
      { type: 'error', method: 'DELETE' },
      { type: 'latency', delay: 100, path: '/never/**' },
    ],
  });
  process.stdout.write(
    `${JSON.stringify({
      direct: upstreamPort,
      'bare node proxy': (bare.address() as AddressInfo).port,
      'tcp mapping': tcp.ports[0],
      'http mapping': httpMapping.ports[0],
      'http + 2 faults': withFaults.ports[0],
    })}\n`,
  );
  process.stdin.resume();
  process.stdin.on('end', () => process.exit(0));
}

async function measure(port: number, seconds: number, connections: number): Promise<number> {
  return new Promise((resolve, reject) => {
    autocannon({ url: `http://127.0.0.1:${port}/`, connections, duration: seconds }, (error, result) =>
      error ? reject(error) : resolve(result.requests.average),
    );
  });
}

async function main(): Promise<void> {
  const seconds = Number(process.env['BENCH_HTTP_SECONDS'] ?? 3);
  const rounds = Number(process.env['BENCH_HTTP_ROUNDS'] ?? 3);
  const connections = Number(process.env['BENCH_HTTP_CONNECTIONS'] ?? 10);
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--serve'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const ports = await new Promise<Record<string, number>>((resolve) => {
    let text = '';
    child.stdout.on('data', (d: Buffer) => {
      text += d.toString();
      if (text.includes('\n')) resolve(JSON.parse(text.split('\n')[0]!) as Record<string, number>);
    });
  });
  try {
    const samples: Record<string, number[]> = Object.fromEntries(Object.keys(ports).map((name) => [name, []]));
    for (const name of Object.keys(ports)) await measure(ports[name]!, 1, connections); // warm-up
    for (let round = 0; round < rounds; round++) {
      for (const [name, port] of Object.entries(ports)) samples[name]!.push(await measure(port, seconds, connections));
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const bare = median(samples['bare node proxy']!);
    out(
      `HTTP exchanges/s, ${connections} keep-alive connections, median ` +
        `of ${rounds} × ${seconds} s (servers in a child process)`,
    );
    out(`${'target'.padEnd(18)} ${'req/s'.padStart(9)}  vs bare node proxy`);
    for (const [name, values] of Object.entries(samples)) {
      const value = median(values);
      out(`${name.padEnd(18)} ${value.toFixed(0).padStart(9)}  ${((value / bare) * 100).toFixed(1)}%`);
    }
    const ratio = median(samples['http mapping']!) / bare;
    out(
      `http mapping / bare node proxy = ${(ratio * 100).toFixed(1)}% (goal ≥ 80%: ${ratio >= 0.8 ? 'met' : 'NOT met'})`,
    );
  } finally {
    child.stdin.end();
    await new Promise((resolve) => child.once('close', resolve));
  }
}

if (process.argv.includes('--serve')) void serve();
else void main();
