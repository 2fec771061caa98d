/**
 * One way for every faultline HTTP door (admin API, /metrics, Toxiproxy API, MCP transport, tool-call proxy, demo
 * services) to bind, name what it bound and stop.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Listening {
  /** `http://address:port` of the bound address (IPv6 in brackets), no path. */
  url: string;
  port: number;
  /** Cuts every connection (idle keep-alive ones too) and resolves once the server has closed. */
  close(): Promise<void>;
}

export interface ListenOptions {
  host: string;
  port: number;
  /** The error a failed listen rejects with (default: the socket's own, EADDRINUSE …). */
  refusal?: (error: NodeJS.ErrnoException) => Error;
  /**
   * Whether the listen's 'error' listener is removed once listening. Left (the default, the side doors'), it takes
   * the first later error (an accept failing with EMFILE) silently, so that door's trouble does not end the run it
   * serves. Removed (the MCP transport's), a later error reaches the process's uncaughtException log (commands/mcp.ts)
   * instead of going unseen.
   */
  detachErrorListener?: boolean;
}

export async function listenHttp(server: Server, options: ListenOptions): Promise<Listening> {
  await new Promise<void>((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException): void => reject(options.refusal ? options.refusal(error) : error);
    server.once('error', failed);
    server.listen({ host: options.host, port: options.port }, () => {
      if (options.detachErrorListener) server.off('error', failed);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.address.includes(':') ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
