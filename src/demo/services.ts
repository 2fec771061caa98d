/**
 * The two small services `faultline demo` tests, both on loopback: a "pricing" upstream, and a
 * "checkout" app that calls it for every request through a port the fault proxy will serve
 * (`upstreamVia`). So the demo shows the case fault's `proxies` argument exists for: the load
 * hits the app, and the fault sits on the app's outbound dependency.
 */
import { createServer, Agent, request } from 'node:http';
import { listenHttp } from '../jsonrpc/listen.js';
import { freePort } from '../proxy/ephemeral-ports.js';

const LOOPBACK = { host: '127.0.0.1', port: 0 };

export interface DemoServices {
  appUrl: string;
  upstreamPort: number;
  /** The port the app calls the upstream through: the fault proxy's mapping listens here. */
  upstreamVia: number;
  close(): Promise<void>;
}

export async function startDemoServices(): Promise<DemoServices> {
  const upstream = createServer((_req, res) => {
    // A few milliseconds of work, as a real lookup would take.
    setTimeout(() => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ sku: 'demo-1', cents: 1299 }));
    }, 3);
  });
  const { port: upstreamPort, close: closeUpstream } = await listenHttp(upstream, LOOPBACK);
  // Free now; the proxy binds it a moment later, so it is picked below the ephemeral range.
  const upstreamVia = await freePort();
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const app = createServer((_req, res) => {
    const call = request(
      { host: '127.0.0.1', port: upstreamVia, path: '/price', agent, timeout: 5000 },
      (upstreamRes) => {
        let body = '';
        upstreamRes.setEncoding('utf8');
        upstreamRes.on('data', (chunk: string) => (body += chunk));
        upstreamRes.on('end', () => {
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify({ order: 'ok', price: JSON.parse(body) as unknown }));
        });
      },
    );
    call.on('timeout', () => call.destroy(new Error('upstream timeout')));
    call.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    call.end();
  });
  const { port: appPort, close: closeApp } = await listenHttp(app, LOOPBACK);
  return {
    appUrl: `http://127.0.0.1:${appPort}/checkout`,
    upstreamPort,
    upstreamVia,
    async close() {
      agent.destroy();
      await closeApp();
      await closeUpstream();
    },
  };
}
