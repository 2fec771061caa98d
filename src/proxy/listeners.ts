/**
 * One TCP listener per mapping, each accepted socket handed over paused. A port that cannot be
 * bound closes the listeners already open and throws an InputError naming the mapping.
 */
import net from 'node:net';
import { InputError } from '../kernel/errors.js';
import { formatAddress } from './mapping.js';
import { ephemeralPortHint } from './ephemeral-ports.js';
import type { Mapping } from './mapping.js';

export interface Listeners {
  /** The bound port of each mapping, in order. */
  readonly ports: number[];
  close(): Promise<void>;
}

/**
 * `argument` names the mappings in errors as the caller wrote them (proxies[1], --proxy[0]);
 * `onBound(index, port)` runs as each listener binds, before the next one is tried.
 */
export async function listen(
  mappings: readonly Mapping[],
  accept: (index: number, socket: net.Socket) => void,
  argument: string | undefined,
  onBound: (index: number, port: number) => void = () => {},
): Promise<Listeners> {
  const servers: net.Server[] = [];
  const ports: number[] = [];
  const close = (): Promise<void> =>
    Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve())))).then(
      () => undefined,
    );
  try {
    for (const [index, mapping] of mappings.entries()) {
      const server = net.createServer({ pauseOnConnect: true, allowHalfOpen: true, noDelay: true }, (socket) =>
        accept(index, socket),
      );
      await new Promise<void>((resolve, reject) => {
        server.once('error', (error: NodeJS.ErrnoException) => {
          const reason = error.code === 'EADDRINUSE' ? 'the address is already in use' : error.message;
          const hint = error.code === 'EADDRINUSE' ? ephemeralPortHint(mapping.listenPort) : '';
          const where = argument ? `${argument}[${index}]: ` : '';
          reject(
            new InputError(
              `${where}cannot listen on ${formatAddress(mapping.listenHost, mapping.listenPort)} ` +
                `for proxy mapping ${JSON.stringify(mapping.text)}: ${reason}${error.code ? ` (${error.code})` : ''}${hint}`,
            ),
          );
        });
        server.listen({ host: mapping.listenHost, port: mapping.listenPort }, () => resolve());
      });
      server.on('error', () => {
        // After listening, a server error (e.g. EMFILE on accept) only costs that accept.
      });
      servers.push(server);
      ports.push((server.address() as net.AddressInfo).port);
      onBound(index, ports[index]!);
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { ports, close };
}
