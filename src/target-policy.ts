/**
 * The one network policy for everything that dials or listens on an agent's behalf: the load
 * target (`url`), the remote side of proxy mappings (a scenario's `proxies`, held proxies,
 * `faultline proxy`), the tool-call plane's upstreams and the probe's `--url`, and the addresses
 * the proxy binds.
 *
 * - Dialling: loopback only by default. Private networks and named hosts are reached only when
 *   the person running faultline lists them (`--allow-targets 10.0.0.0/8,api.staging.local`, or
 *   FAULTLINE_ALLOW_TARGETS): an agent driving faultline must not reach the internal network by
 *   default. `--allow-remote-targets` (FAULTLINE_ALLOW_REMOTE_TARGETS=1) allows every address and
 *   name. Link-local addresses and cloud metadata services never, listed or not. Names are
 *   checked again at every connect, after resolution (targetLookup), so DNS rebinding cannot slip
 *   an address in after the argument check.
 * - Listening: loopback unless non-loopback binds are allowed (`--allow-non-loopback-bind`):
 *   fault bound 0.0.0.0 by default, which exposes a fault-injecting relay to the whole network;
 *   here that takes an explicit decision by the person running the server. One rule for every
 *   listener (bindRefusal); an API that controls faultline needs its token beyond loopback too.
 * - Listen ports below 1024 are refused (privileged; 0 asks for an ephemeral one), and a scenario
 *   or proxy takes at most MAX_PROXY_MAPPINGS mappings.
 */
import { lookup as dnsLookup } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { InputError } from './kernel/errors.js';

/**
 * What may be dialled besides loopback. Plain data, so it crosses into the load generator's
 * thread; ScenarioLimits and TargetPolicy are both one.
 */
export interface TargetAllowance {
  /** Every address and name but link-local and metadata ones (--allow-remote-targets). */
  allowRemoteTargets?: boolean | undefined;
  /**
   * Allowed besides loopback (--allow-targets): CIDR blocks (`10.0.0.0/8`, `fd00::/8`), addresses,
   * host names (`api.staging.local`) and subdomain wildcards (`*.staging.local`); `*` is everything.
   */
  allowTargets?: readonly string[] | undefined;
}

/**
 * A policy as the callers hold it: an allowance, or a plain yes/no (true: every address and name,
 * as --allow-remote-targets; false: loopback only).
 */
export type TargetRules = boolean | TargetAllowance;

export interface TargetPolicy extends TargetAllowance {
  /** Listen on addresses other than loopback. */
  allowNonLoopbackBind?: boolean | undefined;
}

/** The flag and variable that list what may be dialled, as refusals name them. */
export const ALLOW_TARGETS_HINT = '--allow-targets (or FAULTLINE_ALLOW_TARGETS), e.g. 10.0.0.0/8,api.staging.local';
/** Most entries one allow-list takes. */
export const MAX_ALLOW_TARGETS = 256;

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

/** Dialled without any allowance: loopback, and "this host" (0.0.0.0, ::), which Linux connects to loopback. */
const THIS_HOST = new BlockList();
THIS_HOST.addSubnet('127.0.0.0', 8, 'ipv4');
THIS_HOST.addAddress('0.0.0.0', 'ipv4');
THIS_HOST.addAddress('::1', 'ipv6');
THIS_HOST.addAddress('::', 'ipv6');

/** An IPv4-mapped IPv6 address as its IPv4 form; others unchanged. */
function normalise(address: string): { address: string; type: 'ipv4' | 'ipv6' } | undefined {
  const bare = address.replace(/^\[(.*)\]$/, '$1');
  const family = isIP(bare);
  if (family === 0) return undefined;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  if (mapped) return { address: mapped[1]!, type: 'ipv4' };
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(bare);
  if (hex) {
    const high = parseInt(hex[1]!, 16);
    const low = parseInt(hex[2]!, 16);
    return { address: `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`, type: 'ipv4' };
  }
  return { address: bare, type: family === 4 ? 'ipv4' : 'ipv6' };
}

/** Loopback or a private network (descriptive; what may be dialled is addressRefusal's). */
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

/** An allowance, compiled: what the checks below consult. */
interface CompiledRules {
  any: boolean;
  networks: BlockList;
  /** Exact host names, lower case, no trailing dot. */
  names: Set<string>;
  /** `*.example.com` as `.example.com`. */
  suffixes: string[];
  /** The entries as given, for messages and reports. */
  entries: string[];
}

const HOST_NAME =
  /^(?=.{1,253}$)(?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/**
 * The entries of an allow-list (comma- or space-separated), each checked: a CIDR block, an
 * address, a host name or `*.domain`, or `*`. Throws an InputError naming `what` and the entry.
 */
export function parseAllowTargets(text: string, what: string): string[] {
  const entries = text
    .split(/[\s,]+/)
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (entries.length > MAX_ALLOW_TARGETS)
    throw new InputError(`${what}: ${entries.length} entries; at most ${MAX_ALLOW_TARGETS}`);
  for (const entry of entries) {
    const problem = entryProblem(entry);
    if (problem) throw new InputError(`${what}: ${JSON.stringify(entry.slice(0, 80))} ${problem}`);
  }
  return entries;
}

function entryProblem(entry: string): string | undefined {
  if (entry === '*') return undefined;
  const cidr = /^(.+)\/(\d{1,3})$/.exec(entry);
  if (cidr) {
    const ip = normalise(cidr[1]!);
    const bits = Number(cidr[2]);
    if (!ip) return 'is not a CIDR block: the part before / is not an IP address';
    if (bits > (ip.type === 'ipv4' ? 32 : 128))
      return `is not a CIDR block: /${bits} is too long for ${ip.type === 'ipv4' ? 'IPv4' : 'IPv6'}`;
    return undefined;
  }
  if (normalise(entry)) return undefined;
  const name = entry.toLowerCase().replace(/\.$/, '');
  if (HOST_NAME.test(name.startsWith('*.') ? name.slice(2) : name)) return undefined;
  return 'is not a CIDR block (10.0.0.0/8), an address, a host name (api.staging.local), *.domain or *';
}

const compiled = new Map<string, CompiledRules>();

function compile(rules: TargetRules): CompiledRules {
  const allowance: TargetAllowance = typeof rules === 'boolean' ? { allowRemoteTargets: rules } : rules;
  const entries = [...(allowance.allowTargets ?? [])];
  const key = `${allowance.allowRemoteTargets === true}|${entries.join(',')}`;
  let result = compiled.get(key);
  if (result) return result;
  result = {
    any: allowance.allowRemoteTargets === true,
    networks: new BlockList(),
    names: new Set(),
    suffixes: [],
    entries,
  };
  for (const entry of entries) {
    if (entryProblem(entry) !== undefined) continue; // parseAllowTargets refused it where it was given
    if (entry === '*') {
      result.any = true;
      continue;
    }
    const cidr = /^(.+)\/(\d{1,3})$/.exec(entry);
    const ip = normalise(cidr ? cidr[1]! : entry);
    if (ip && cidr) result.networks.addSubnet(ip.address, Number(cidr[2]), ip.type);
    else if (ip) result.networks.addAddress(ip.address, ip.type);
    else {
      const name = entry.toLowerCase().replace(/\.$/, '');
      if (name.startsWith('*.')) result.suffixes.push(name.slice(1));
      else result.names.add(name);
    }
  }
  // A few distinct policies per process (one per server configuration); bounded all the same.
  if (compiled.size >= 64) compiled.clear();
  compiled.set(key, result);
  return result;
}

/** Whether `hostname` is listed by name (exactly, or under a `*.domain` entry). */
function nameAllowed(rules: CompiledRules, hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return rules.names.has(name) || rules.suffixes.some((suffix) => name.endsWith(suffix));
}

/** Whether `rules` allow the name `hostname` as such (listed, or every name allowed), whatever it resolves to but
 * link-local or metadata. */
export function hostnameAllowed(rules: TargetRules, hostname: string): boolean {
  const compiledRules = compile(rules);
  return compiledRules.any || nameAllowed(compiledRules, hostname);
}

/**
 * Why `address` (an IP) may not be dialled under `rules`; undefined when it may. `hostname`, when
 * the address came from resolving a name, lets a name on the allow-list reach what it resolves to
 * (but never a link-local or metadata address).
 */
export function addressRefusal(address: string, rules: TargetRules, hostname?: string): string | undefined {
  if (isForbiddenAddress(address))
    return `${address} is a link-local or cloud metadata address, which is never a target`;
  const ip = normalise(address);
  if (!ip) return `${address} is not an IP address`;
  if (THIS_HOST.check(ip.address, ip.type)) return undefined;
  const compiledRules = compile(rules);
  if (compiledRules.any) return undefined;
  if (hostname !== undefined && isIP(hostname.replace(/^\[|\]$/g, '')) === 0 && nameAllowed(compiledRules, hostname))
    return undefined;
  if (compiledRules.networks.check(ip.address, ip.type)) return undefined;
  // Private or public, the answer is the same: only loopback is accepted unless the allow-list says more.
  const kind = isLocalAddress(address) ? 'a private address' : 'not a loopback address';
  return (
    `${address} is ${kind}; only loopback targets are accepted unless ` +
    `the server's allow-list names it: ${ALLOW_TARGETS_HINT}`
  );
}

/** What the policy allows, as reports and start-up lines show it: "loopback only", "loopback, 10.0.0.0/8,
 * api.staging.local". */
export function describeTargets(rules: TargetRules): string {
  const compiledRules = compile(rules);
  if (compiledRules.any) return 'any address but link-local and metadata';
  return compiledRules.entries.length === 0 ? 'loopback only' : ['loopback', ...compiledRules.entries].join(', ');
}

/**
 * A `lookup` for net/tls.connect that resolves as usual and fails with ENOTLOCAL when an address
 * is refused by the policy: applied at every connect.
 */
export function targetLookup(rules: TargetRules): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      const done = callback as (...args: unknown[]) => void;
      if (error) return done(error, options.all ? [] : '', 0);
      const refusals = addresses
        .map((entry) => addressRefusal(entry.address, rules, hostname))
        .filter((r) => r !== undefined);
      if (refusals.length > 0 || addresses.length === 0) {
        const refusal = Object.assign(new Error(`${hostname}: ${refusals[0] ?? 'resolves to nothing'}`), {
          code: 'ENOTLOCAL',
        });
        return done(refusal, options.all ? [] : '', 0);
      }
      if (options.all) return done(null, addresses);
      return done(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
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
  const optIn = rule.serverFlag
    ? 'unless the server runs with --allow-non-loopback-bind'
    : 'unless --allow-non-loopback-bind is given';
  if (!rule.allowNonLoopbackBind) {
    const andToken = rule.token ? ` (and then ${rule.token.flag} as well)` : '';
    return (
      `${rule.argument}: ${rule.what} listens only on loopback ` +
      `(127.0.0.1, ::1) ${optIn}${andToken}; ${host} is not loopback`
    );
  }
  if (rule.token && !rule.token.value) {
    return `${rule.argument}: ${rule.what} on ${host}, beyond loopback, needs a token as well: ${rule.token.flag}`;
  }
  return undefined;
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
    throw new InputError(`${what}: ${mappings.length} mappings given; at most ${MAX_PROXY_MAPPINGS} are accepted`);
  }
  mappings.forEach((mapping, index) => {
    const name = `${what}[${index}] (${JSON.stringify(mapping.text)})`;
    // Two listeners on one port: refused when read, not met as EADDRINUSE once the run has started.
    const first = mapping.listenPort === 0 ? -1 : mappings.findIndex((m) => m.listenPort === mapping.listenPort);
    if (first >= 0 && first < index) {
      throw new InputError(
        `${name}: local port ${mapping.listenPort} is also ${what}[${first}] (${JSON.stringify(mappings[first]!.text)}); ` +
          'give each mapping its own port',
      );
    }
    const portRefusal = listenPortRefusal(mapping.listenPort);
    if (portRefusal !== undefined) throw new InputError(`${name}: local ${portRefusal}`);
    // A flag (--proxy) is this command line's; a tool argument's opt-in is the server's flag.
    const bind = bindRefusal(mapping.listenHost, {
      argument: name,
      what: 'the proxy',
      allowNonLoopbackBind: policy.allowNonLoopbackBind === true,
      serverFlag: !what.startsWith('--'),
    });
    if (bind !== undefined) throw new InputError(bind);
    if (isIP(mapping.remoteHost.replace(/^\[|\]$/g, '')) !== 0) {
      const refusal = addressRefusal(mapping.remoteHost, policy);
      if (refusal) throw new InputError(`${name}: remote ${refusal}`);
    }
  });
}
