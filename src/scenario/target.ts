/**
 * The safety check on what a scenario may load: by default only loopback and private addresses
 * (we never load-test someone else's server by accident). A host name is resolved, and every
 * address it resolves to must qualify, so a public name cannot slip through; and the sockets that
 * carry the load resolve through `localOnlyLookup`, which applies the same rule at connect time,
 * so a name that resolves elsewhere later (DNS rebinding) cannot either.
 *
 * Link-local addresses (169.254/16, fe80::/10) are not private networks, and 169.254.169.254 is
 * the cloud metadata service: they are refused too.
 */
import { lookup as dnsLookup } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { ToolInputError } from '../errors.js';

const LOCAL_RANGES = new BlockList();
LOCAL_RANGES.addSubnet('127.0.0.0', 8, 'ipv4'); // loopback
LOCAL_RANGES.addSubnet('10.0.0.0', 8, 'ipv4'); // private (RFC 1918)
LOCAL_RANGES.addSubnet('172.16.0.0', 12, 'ipv4');
LOCAL_RANGES.addSubnet('192.168.0.0', 16, 'ipv4');
LOCAL_RANGES.addAddress('0.0.0.0', 'ipv4'); // "this host" on Linux
LOCAL_RANGES.addAddress('::1', 'ipv6'); // loopback
LOCAL_RANGES.addAddress('::', 'ipv6');
LOCAL_RANGES.addSubnet('fc00::', 7, 'ipv6'); // unique local

export function isLocalAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return LOCAL_RANGES.check(mapped[1]!, 'ipv4');
  return LOCAL_RANGES.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * Checks that `url` is an http(s) URL whose host is loopback or private (unless remote targets
 * are allowed); returns the parsed URL. `what` names the argument in errors.
 */
export async function checkLoadTarget(url: string, allowRemote: boolean, what = 'url'): Promise<URL> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ToolInputError(`${what}: "${url}" is not a URL; give an http:// or https:// URL such as http://127.0.0.1:8080/health`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ToolInputError(`${what}: "${url}" uses ${parsed.protocol}; only http:// and https:// URLs can be loaded`);
  }
  if (parsed.username !== '' || parsed.password !== '') {
    // Refused before anything logs or sends the URL: credentials do not belong in it.
    throw new ToolInputError(`${what}: credentials in the URL are not supported; send them as a header, e.g. headers: ["Authorization: Basic …"]`);
  }
  if (allowRemote) return parsed;
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (isIP(host)) {
    addresses = [host];
  } else {
    try {
      addresses = (await lookup(host, { all: true })).map((entry) => entry.address);
    } catch (error) {
      throw new ToolInputError(`${what}: cannot resolve ${host} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
  }
  const remote = addresses.filter((address) => !isLocalAddress(address));
  if (remote.length > 0) {
    throw new ToolInputError(
      `${what}: ${host} resolves to ${remote.join(', ')}, which is not a loopback or private address; scenarios load only ` +
        'local and private targets unless the server runs with --allow-remote-targets',
    );
  }
  return parsed;
}

/**
 * A `lookup` for net/tls.connect that resolves as usual and fails with ENOTLOCAL when any address
 * is not loopback or private.
 */
export const localOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    const done = callback as (...args: unknown[]) => void;
    if (error) return done(error, options.all ? [] : '', 0);
    const remote = addresses.filter((entry) => !isLocalAddress(entry.address));
    if (remote.length > 0 || addresses.length === 0) {
      const refusal = Object.assign(
        new Error(`${hostname} resolves to ${remote.map((entry) => entry.address).join(', ') || 'nothing'}, not a loopback or private address`),
        { code: 'ENOTLOCAL' },
      );
      return done(refusal, options.all ? [] : '', 0);
    }
    if (options.all) return done(null, addresses);
    return done(null, addresses[0]!.address, addresses[0]!.family);
  });
};
