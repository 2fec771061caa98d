/** A loopback HTTP endpoint answering every request 200 "ok": the target the scenario tests load. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OkApp {
  /** http://127.0.0.1:PORT/ */
  url: string;
  close(): Promise<void>;
}

export async function startOkApp(): Promise<OkApp> {
  const server = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
