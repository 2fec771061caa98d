/**
 * The system's ephemeral port range: the ports it hands to outgoing connections (and to `0`). A
 * listener asked for a fixed port inside it can meet EADDRINUSE with nothing listening there, as
 * an outgoing socket of any program holds it for a while; the refusal says so, and what to pick.
 */
import { readFileSync } from 'node:fs';

/** Linux's default when /proc cannot be read (other systems use 49152–65535, within this bound). */
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
