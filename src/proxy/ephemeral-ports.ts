/**
 * The system's ephemeral port range: the ports it hands to outgoing connections (and to `0`). A
 * listener asked for a fixed port inside it can meet EADDRINUSE with nothing listening there, as
 * an outgoing socket of any program holds it for a while; the refusal says so, and what to pick.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** Linux's default, taken when /proc cannot be read (macOS and Windows use 49152–65535: mostly above it). */
const LINUX_DEFAULT: readonly [number, number] = [32768, 60999];

export function ephemeralRange(file = '/proc/sys/net/ipv4/ip_local_port_range'): {
  low: number;
  high: number;
  source: string;
} {
  try {
    const [low, high] = readFileSync(file, 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && Number.isInteger(high) && low! > 0 && high! >= low!)
      return { low: low!, high: high!, source: file };
  } catch {
    // Not Linux, or /proc not mounted: the usual range.
  }
  return { low: LINUX_DEFAULT[0], high: LINUX_DEFAULT[1], source: 'the usual Linux range' };
}

/** The hint for a port in use, when the port is in the ephemeral range; '' otherwise. */
export function ephemeralPortHint(port: number, range = ephemeralRange()): string {
  if (port < range.low || port > range.high) return '';
  return (
    `; port ${port} is in the system's ephemeral range ${range.low}–${range.high} (${range.source}), ` +
    'which outgoing connections take too: it may be held with nothing listening — pick a port below ' +
    `${range.low}`
  );
}

/** How many random ports below the range are tried before falling back to one the system picks. */
const PICK_TRIES = 20;

/**
 * A port nothing listens on now, for a listener started a moment later (a child's, a proxy mapping's).
 * Below the ephemeral range when there is room: a port from `listen(0)` is in that range, and between
 * its release and the later listen any outgoing connection on the machine can take it (EADDRINUSE).
 */
export async function freePort(host = '127.0.0.1', range = ephemeralRange()): Promise<number> {
  // Above the registered services most machines run (3000, 5432, 6379, 8080, 9090 …) when there is room.
  const floor = Math.max(1024, range.low - 10_000);
  for (let tries = 0; range.low - floor >= 1000 && tries < PICK_TRIES; tries++) {
    const port = floor + Math.floor(Math.random() * (range.low - floor));
    if ((await listenOnce(port, host)) !== undefined) return port;
  }
  const port = await listenOnce(0, host);
  if (port === undefined) throw new Error(`cannot listen on ${host} on any port`);
  return port;
}

/** Listens on host:port and closes at once: the port it had, or undefined where it could not. */
function listenOnce(port: number, host: string): Promise<number | undefined> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(undefined));
    server.listen({ port, host, exclusive: true }, () => {
      const bound = (server.address() as { port: number }).port;
      server.close(() => resolve(bound));
    });
  });
}
