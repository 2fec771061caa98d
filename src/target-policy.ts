/**
 * The one network policy for everything that dials or listens on an agent's behalf: the load
 * target (`url`), the remote side of proxy mappings (a scenario's `proxies`, `faultline proxy`)
 * and the addresses the proxy binds (DESIGN.md §3, issue 11).
 *
 * - Remote addresses must be loopback or private unless remote targets are allowed
 *   (`--allow-remote-targets`); link-local addresses and cloud metadata services never, allowed
 *   or not. Names are checked again at every connect (targetLookup), so DNS rebinding cannot
 *   slip a metadata address in after the argument check.
 * - A listener binds loopback unless non-loopback binds are allowed (`--allow-non-loopback-bind`):
 *   fault bound 0.0.0.0 by default, which exposes a fault-injecting relay to the whole network;
 *   here that takes an explicit decision by the person running the server. One rule for every
 *   listener (bindRefusal); an API that controls faultline needs its token beyond loopback too.
 * - Listen ports below 1024 are refused (privileged; 0 asks for an ephemeral one), and a scenario
 *   or proxy takes at most MAX_PROXY_MAPPINGS mappings.
 */
import { lookup as dnsLookup } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { ToolInputError } from './errors.js';

export interface TargetPolicy {
  /** Dial addresses that are neither loopback nor private. */
  allowRemoteTargets: boolean;
  /** Listen on addresses other than loopback. */
  allowNonLoopbackBind?: boolean | undefined;
}

/** Most proxy mappings one scenario or one `faultline proxy` accepts. */
export const MAX_PROXY_MAPPINGS = 16;
/** Lowest listen port accepted (besides 0, an ephemeral port). */
export const MIN_LISTEN_PORT = 1024;

/**
 * Why a listen port is refused, or undefined when it is fine: the one rule for every listener
 * faultline opens (proxy mappings, the admin API, the MCP and tool-call-plane HTTP servers). A
 * privileged port either fails for a normal user or, run as root, takes a system service's place.
 */
export function listenPortRefusal(port: number): string | undefined {
  if (port === 0 || port >= MIN_LISTEN_PORT) return undefined;
  return `port ${port} is privileged; use 0 (ephemeral) or a port from ${MIN_LISTEN_PORT} to 65535`;
}

const LOCAL_RANGES = new BlockList();
LOCAL_RANGES.addSubnet('127.0.0.0', 8, 'ipv4'); // loopback
LOCAL_RANGES.addSubnet('10.0.0.0', 8, 'ipv4'); // private (RFC 1918)
LOCAL_RANGES.addSubnet('172.16.0.0', 12, 'ipv4');
LOCAL_RANGES.addSubnet('192.168.0.0', 16, 'ipv4');
LOCAL_RANGES.addAddress('0.0.0.0', 'ipv4'); // "this host" on Linux
LOCAL_RANGES.addAddress('::1', 'ipv6'); // loopback
LOCAL_RANGES.addAddress('::', 'ipv6');
LOCAL_RANGES.addSubnet('fc00::', 7, 'ipv6'); // unique local

/** Never dialled: link-local networks and the cloud metadata services that live there or nearby. */
const FORBIDDEN_RANGES = new BlockList();
FORBIDDEN_RANGES.addSubnet('169.254.0.0', 16, 'ipv4'); // link-local; 169.254.169.254 is the metadata service
FORBIDDEN_RANGES.addAddress('100.100.100.200', 'ipv4'); // Alibaba Cloud metadata
FORBIDDEN_RANGES.addSubnet('fe80::', 10, 'ipv6'); // link-local
FORBIDDEN_RANGES.addAddress('fd00:ec2::254', 'ipv6'); // AWS metadata over IPv6

const LOOPBACK_RANGES = new BlockList();
LOOPBACK_RANGES.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK_RANGES.addAddress('::1', 'ipv6');

/** An IPv4-mapped IPv6 address as its IPv4 form; others unchanged. */
function normalise(address: string): { address: string; type: 'ipv4' | 'ipv6' } | undefined {
  const family = isIP(address);
  if (family === 0) return undefined;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return { address: mapped[1]!, type: 'ipv4' };
  return { address, type: family === 4 ? 'ipv4' : 'ipv6' };
}

export function isLocalAddress(address: string): boolean {
  const ip = normalise(address);
  return ip !== undefined && LOCAL_RANGES.check(ip.address, ip.type) && !FORBIDDEN_RANGES.check(ip.address, ip.type);
}

export function isForbiddenAddress(address: string): boolean {
  const ip = normalise(address);
  return ip !== undefined && FORBIDDEN_RANGES.check(ip.address, ip.type);
}

export function isLoopbackAddress(address: string): boolean {
  const bare = address.replace(/^\[(.*)\]$/, '$1'); // [::1] as a URL writes it
  if (bare.toLowerCase() === 'localhost') return true;
  const ip = normalise(bare);
  return ip !== undefined && LOOPBACK_RANGES.check(ip.address, ip.type);
}

/** What a listener's bind is checked against (bindRefusal). */
export interface BindRule {
  /** The argument that named the address, as messages quote it: `--host 0.0.0.0`, `proxies[0] ("…")`. */
  argument: string;
  /** What would listen: 'the proxy', 'the admin API', 'the MCP HTTP server'. */
  what: string;
  allowNonLoopbackBind: boolean;
  /** A control or MCP HTTP API, which drives faultline itself: beyond loopback it needs its token too. */
  token?: { value: string | undefined; flag: string };
  /** The opt-in is the flag of the server an agent talks to (a tool's argument), not of this command line. */
  serverFlag?: boolean;
}

/**
 * Why binding `host` is refused, or undefined when it may: the one rule for every listener
 * faultline opens (the MCP HTTP transport, `faultline proxy` mappings and its admin API, the
 * scenario proxies, `mcp-chaos proxy http`). Loopback always; any other address only with
 * --allow-non-loopback-bind, an explicit decision by the person running faultline; and an API
 * that controls faultline (its MCP tools, the fault admin API) also needs its token there.
 */
export function bindRefusal(host: string, rule: BindRule): string | undefined {
  if (isLoopbackAddress(host)) return undefined;
  const optIn = rule.serverFlag ? 'unless the server runs with --allow-non-loopback-bind' : 'unless --allow-non-loopback-bind is given';
  if (!rule.allowNonLoopbackBind) {
    const andToken = rule.token ? ` (and then ${rule.token.flag} as well)` : '';
    return `${rule.argument}: ${rule.what} listens only on loopback (127.0.0.1, ::1) ${optIn}${andToken}; ${host} is not loopback`;
  }
  if (rule.token && !rule.token.value) {
    return `${rule.argument}: ${rule.what} on ${host}, beyond loopback, needs a token as well: ${rule.token.flag}`;
  }
  return undefined;
}

/** Why `address` (an IP) may not be dialled under `policy`; undefined when it may. */
export function addressRefusal(address: string, allowRemoteTargets: boolean): string | undefined {
  if (isForbiddenAddress(address)) return `${address} is a link-local or cloud metadata address, which is never a target`;
  if (!allowRemoteTargets && !isLocalAddress(address)) {
    return `${address} is not a loopback or private address; only local and private targets are accepted unless the server runs with --allow-remote-targets`;
  }
  return undefined;
}

/**
 * A `lookup` for net/tls.connect that resolves as usual and fails with ENOTLOCAL when an address
 * is refused by the policy: applied at every connect.
 */
export function targetLookup(allowRemoteTargets: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      const done = callback as (...args: unknown[]) => void;
      if (error) return done(error, options.all ? [] : '', 0);
      const refusals = addresses.map((entry) => addressRefusal(entry.address, allowRemoteTargets)).filter((r) => r !== undefined);
      if (refusals.length > 0 || addresses.length === 0) {
        const refusal = Object.assign(new Error(`${hostname}: ${refusals[0] ?? 'resolves to nothing'}`), { code: 'ENOTLOCAL' });
        return done(refusal, options.all ? [] : '', 0);
      }
      if (options.all) return done(null, addresses);
      return done(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

/** The parts of a proxy mapping the policy looks at (structurally a proxy Mapping). */
export interface MappingEnds {
  text: string;
  listenHost: string;
  listenPort: number;
  remoteHost: string;
}

/**
 * Checks mappings before anything binds: how many, the listen address and port, and remotes
 * given as IP literals (names are checked at every connect by targetLookup). `what` names the
 * argument in errors (`proxies`, `--proxy`).
 */
export function checkMappings(mappings: readonly MappingEnds[], policy: TargetPolicy, what: string): void {
  if (mappings.length > MAX_PROXY_MAPPINGS) {
    throw new ToolInputError(`${what}: ${mappings.length} mappings given; at most ${MAX_PROXY_MAPPINGS} are accepted`);
  }
  mappings.forEach((mapping, index) => {
    const name = `${what}[${index}] (${JSON.stringify(mapping.text)})`;
    const portRefusal = listenPortRefusal(mapping.listenPort);
    if (portRefusal !== undefined) throw new ToolInputError(`${name}: local ${portRefusal}`);
    // A flag (--proxy) is this command line's; a tool argument's opt-in is the server's flag.
    const bind = bindRefusal(mapping.listenHost, { argument: name, what: 'the proxy', allowNonLoopbackBind: policy.allowNonLoopbackBind === true, serverFlag: !what.startsWith('--') });
    if (bind !== undefined) throw new ToolInputError(bind);
    if (isIP(mapping.remoteHost) !== 0) {
      const refusal = addressRefusal(mapping.remoteHost, policy.allowRemoteTargets);
      if (refusal) throw new ToolInputError(`${name}: remote ${refusal}`);
    }
  });
}
