/**
 * The Toxiproxy API's proxies: each a faultline proxy (src/proxy, one mapping, the proxy's name
 * as the mapping's) whose fault list is its toxics, spelled by toxics.ts. Every change is checked
 * whole before anything moves, so bad input leaves no half-made proxy or toxic.
 *
 *   create / update / remove / populate / reset        (POST, POST, DELETE /proxies…, /populate, /reset)
 *   addToxic / updateToxic / removeToxic               (… /toxics)
 *
 * Errors are ApiErrors carrying Toxiproxy's status and message.
 */
import { isIP } from 'node:net';
import { InputError, messageOf } from '../kernel/errors.js';
import type { FaultSpec } from '../proxy/faults/index.js';
import type { HttpFaultSpec } from '../proxy/http/spec.js';
import { parseMapping, type Mapping } from '../proxy/mapping.js';
import { startProxy, type ProxyCounters, type RunningProxy } from '../proxy/proxy.js';
import { checkMappings, type TargetPolicy } from '../target-policy.js';
import { isHttpToxic, isToxicType, toxicFault, withDefaults, type ToxicFault, type ToxicJson } from './toxics.js';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export const NOT_FOUND = (what: 'proxy' | 'toxic'): ApiError => new ApiError(404, `${what} not found`);
const EXISTS = (what: 'proxy' | 'toxic'): ApiError => new ApiError(409, `${what} already exists`);
const badBody = (reason: string): ApiError => new ApiError(400, `bad request body: ${reason}`);
const INVALID_STREAM = new ApiError(400, 'stream was invalid, can be either upstream or downstream');

/** A proxy as Toxiproxy's API answers it. */
export interface ProxyJson {
  name: string;
  listen: string;
  upstream: string;
  enabled: boolean;
  toxics: ToxicJson[];
}

export interface Toxic {
  json: ToxicJson;
  fault: ToxicFault;
  /** Injected through the /chaos routes (chaos.ts): a faultline fault config, its attributes as written. */
  injected?: true;
}

/** Most proxies one server holds, and toxics one proxy (a bound on memory, far above any suite's use). */
export const MAX_PROXIES = 1000;
export const MAX_TOXICS = 100;

export interface CollectionOptions {
  /** The target policy: where upstreams may point and where listeners may bind. */
  policy: TargetPolicy;
  seed?: number | string | undefined;
  log?: (line: string) => void;
  /** Start proxies even where the environment says production (--allow-production; src/production.ts). */
  allowProduction?: boolean;
}

/** One proxy: its Toxiproxy fields, its toxics in the order added, and the faultline proxy running it. */
export class ToxicProxy {
  toxics: Toxic[] = [];
  running: RunningProxy | undefined;
  /** Whether the listener is open. */
  enabled = false;

  constructor(
    readonly name: string,
    public listen: string,
    public upstream: string,
    public mapping: Mapping,
  ) {}

  json(): ProxyJson {
    return {
      name: this.name,
      listen: this.listen,
      upstream: this.upstream,
      enabled: this.enabled,
      toxics: this.toxicList(),
    };
  }

  /** Upstream toxics first, then downstream, each in the order added (as Toxiproxy lists them). */
  toxicList(): ToxicJson[] {
    const upstream = this.toxics.filter((toxic) => toxic.json.stream.toLowerCase() === 'upstream');
    const downstream = this.toxics.filter((toxic) => toxic.json.stream.toLowerCase() !== 'upstream');
    return [...upstream, ...downstream].map((toxic) => ({
      ...toxic.json,
      attributes: toxic.injected ? { ...toxic.json.attributes } : withDefaults(toxic.json.type, toxic.json.attributes),
    }));
  }

  counters(): ProxyCounters | undefined {
    return this.running?.counters();
  }

  /** The fault lists the toxics make. */
  faults(toxics: readonly Toxic[] = this.toxics): { network: FaultSpec[]; http: HttpFaultSpec[] } {
    const network: FaultSpec[] = [];
    const http: HttpFaultSpec[] = [];
    for (const { fault } of toxics) {
      if (fault?.kind === 'network') network.push(fault.spec);
      else if (fault?.kind === 'http') http.push(fault.spec);
    }
    return { network, http };
  }

  /** Gives the running proxy the fault lists of `toxics` (throws, changing nothing, when one is refused). */
  apply(toxics: readonly Toxic[]): void {
    const { network, http } = this.faults(toxics);
    if (!this.running) return;
    this.running.setFaults(network);
    if (this.running.http) this.running.setHttpFaults(http);
  }
}

export class ProxyCollection {
  private readonly proxies = new Map<string, ToxicProxy>();
  /** One change at a time: each request's change runs whole before the next starts. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: CollectionOptions) {}

  /** Runs `change` after every change before it (the API's lock). */
  serial<T>(change: () => Promise<T> | T): Promise<T> {
    const run = this.queue.then(change, change);
    this.queue = run.catch(() => {});
    return run;
  }

  all(): ToxicProxy[] {
    return [...this.proxies.values()];
  }

  get(name: string): ToxicProxy {
    const proxy = this.proxies.get(name);
    if (!proxy) throw NOT_FOUND('proxy');
    return proxy;
  }

  /** POST /proxies. */
  async create(body: unknown): Promise<ToxicProxy> {
    const input = readProxyInput(body, '');
    if (this.proxies.has(input.name)) throw EXISTS('proxy');
    if (this.proxies.size >= MAX_PROXIES) throw new ApiError(400, `at most ${MAX_PROXIES} proxies`);
    const proxy = new ToxicProxy(input.name, input.listen, input.upstream, this.mappingOf(input));
    if (input.enabled) await this.start(proxy);
    this.proxies.set(proxy.name, proxy);
    return proxy;
  }

  /** POST /proxies/{name}: listen, upstream and enabled, each kept unless sent. */
  async update(name: string, body: unknown): Promise<ToxicProxy> {
    const proxy = this.get(name);
    const record = objectBody(body);
    const input = readProxyInput(
      { listen: proxy.listen, upstream: proxy.upstream, enabled: proxy.enabled, ...record, name },
      '',
    );
    if (differs(proxy, input)) {
      const mapping = this.mappingOf(input);
      const wasEnabled = proxy.enabled;
      await this.stop(proxy);
      const previous = { listen: proxy.listen, upstream: proxy.upstream, mapping: proxy.mapping };
      Object.assign(proxy, { listen: input.listen, upstream: input.upstream, mapping });
      if (input.enabled) {
        try {
          await this.start(proxy);
        } catch (error) {
          // The new address could not be bound: the proxy stays as it was.
          Object.assign(proxy, previous);
          if (wasEnabled) await this.start(proxy).catch(() => {});
          throw error;
        }
      }
      return proxy;
    }
    if (input.enabled !== proxy.enabled) await (input.enabled ? this.start(proxy) : this.stop(proxy, false));
    return proxy;
  }

  /** DELETE /proxies/{name}. */
  async remove(name: string): Promise<void> {
    const proxy = this.get(name);
    this.proxies.delete(name);
    await this.stop(proxy);
  }

  /**
   * POST /populate: every entry checked first (nothing changes on a bad one); then each proxy is
   * created, kept (same listen and upstream: its toxics too) or replaced, in order. A failure to
   * bind stops there, with the proxies done so far.
   */
  async populate(body: unknown): Promise<{ proxies: ToxicProxy[]; error?: ApiError }> {
    if (!Array.isArray(body)) throw badBody('the body is a JSON array of proxies');
    const inputs = body.map((entry, index) => readProxyInput(entry, ` at proxy ${index + 1}`));
    const mappings = inputs.map((input, index) => {
      try {
        return this.mappingOf(input);
      } catch (error) {
        throw error instanceof ApiError ? new ApiError(error.status, `${error.message} at proxy ${index + 1}`) : error;
      }
    });
    const done: ToxicProxy[] = [];
    for (const [index, input] of inputs.entries()) {
      const existing = this.proxies.get(input.name);
      if (existing && !differs(existing, input)) {
        done.push(existing);
        continue;
      }
      const proxy = new ToxicProxy(input.name, input.listen, input.upstream, mappings[index]!);
      try {
        if (existing) await existing.running?.setEnabled(false);
        if (input.enabled) await this.start(proxy);
      } catch (error) {
        if (existing) await existing.running?.setEnabled(existing.enabled).catch(() => {});
        return { proxies: done, error: error instanceof ApiError ? error : new ApiError(500, messageOf(error)) };
      }
      if (existing) await this.stop(existing);
      this.proxies.set(proxy.name, proxy);
      done.push(proxy);
    }
    return { proxies: done };
  }

  /** POST /reset: every proxy enabled, every toxic removed. */
  async reset(): Promise<void> {
    for (const proxy of this.proxies.values()) {
      this.setToxics(proxy, []);
      if (!proxy.enabled) await this.start(proxy);
    }
  }

  /** POST /proxies/{name}/toxics. */
  addToxic(proxyName: string, body: unknown): ToxicJson {
    const proxy = this.get(proxyName);
    const record = objectBody(body);
    const stream = record['stream'] ?? 'downstream';
    if (typeof stream !== 'string') throw badBody('stream must be a string');
    if (!['upstream', 'downstream'].includes(stream.toLowerCase())) throw INVALID_STREAM;
    const type = record['type'];
    if (type !== undefined && typeof type !== 'string') throw badBody('type must be a string');
    const name = record['name'] ?? '';
    if (typeof name !== 'string') throw badBody('name must be a string');
    const json: ToxicJson = {
      attributes: {},
      name: name === '' ? `${type ?? ''}_${stream}` : name,
      type: (type as string | undefined) ?? '',
      stream,
      toxicity: 1,
    };
    if (!isToxicType(json.type)) throw new ApiError(400, 'invalid toxic type');
    if (proxy.toxics.some((toxic) => toxic.json.name === json.name)) throw EXISTS('toxic');
    if (proxy.toxics.length >= MAX_TOXICS) throw new ApiError(400, `at most ${MAX_TOXICS} toxics per proxy`);
    if (isHttpToxic(json.type) && proxy.mapping.protocol !== 'http') {
      throw new ApiError(
        400,
        `toxic type ${json.type} acts on HTTP exchanges: create the proxy with an upstream declared http://HOST:PORT`,
      );
    }
    json.attributes = readAttributes(record['attributes']);
    json.toxicity = readToxicity(record['toxicity'], 1);
    const toxic = { json, fault: faultOf(json) };
    this.setToxics(proxy, [...proxy.toxics, toxic]);
    return proxy.toxicList().find((listed) => listed.name === json.name)!;
  }

  /** A toxic made elsewhere (a /chaos/inject: chaos.ts), added as POST …/toxics adds one. */
  addMade(proxyName: string, toxic: Toxic): void {
    const proxy = this.get(proxyName);
    if (proxy.toxics.length >= MAX_TOXICS) throw new ApiError(400, `at most ${MAX_TOXICS} toxics per proxy`);
    if (toxic.fault?.kind === 'http' && proxy.mapping.protocol !== 'http')
      throw new ApiError(
        400,
        `proxy ${proxyName} does not read HTTP (its upstream is not http://), so it takes no HTTP fault`,
      );
    this.setToxics(proxy, [...proxy.toxics, toxic]);
  }

  /** POST /proxies/{name}/toxics/{toxic}: attributes merged into the current ones, toxicity kept unless sent. */
  updateToxic(proxyName: string, toxicName: string, body: unknown): ToxicJson {
    const proxy = this.get(proxyName);
    const index = proxy.toxics.findIndex((toxic) => toxic.json.name === toxicName);
    if (index === -1) throw NOT_FOUND('toxic');
    const record = objectBody(body);
    const current = proxy.toxics[index]!;
    if (current.injected)
      throw new ApiError(400, `toxic ${toxicName} was injected through /chaos/inject: clear it and inject it again`);
    const json: ToxicJson = {
      ...current.json,
      attributes: { ...current.json.attributes, ...readAttributes(record['attributes']) },
      toxicity: readToxicity(record['toxicity'], current.json.toxicity),
    };
    const toxics = [...proxy.toxics];
    toxics[index] = { json, fault: faultOf(json) };
    this.setToxics(proxy, toxics);
    return proxy.toxicList().find((listed) => listed.name === toxicName)!;
  }

  /** DELETE /proxies/{name}/toxics/{toxic}. */
  removeToxic(proxyName: string, toxicName: string): void {
    const proxy = this.get(proxyName);
    if (!proxy.toxics.some((toxic) => toxic.json.name === toxicName)) throw NOT_FOUND('toxic');
    this.setToxics(
      proxy,
      proxy.toxics.filter((toxic) => toxic.json.name !== toxicName),
    );
  }

  /** Stops every proxy (SIGTERM): resolves once every listener and connection is closed. */
  async close(): Promise<void> {
    const all = [...this.proxies.values()];
    this.proxies.clear();
    await Promise.all(all.map((proxy) => this.stop(proxy)));
  }

  private setToxics(proxy: ToxicProxy, toxics: Toxic[]): void {
    try {
      proxy.apply(toxics);
    } catch (error) {
      if (error instanceof InputError) throw badBody(error.message);
      throw error;
    }
    proxy.toxics = toxics;
  }

  /** Opens the proxy's listener: the running proxy's again, or a new one. */
  private async start(proxy: ToxicProxy): Promise<void> {
    if (proxy.running) {
      await proxy.running.setEnabled(true).catch((error: unknown) => {
        throw bindError(error, proxy.listen);
      });
      proxy.enabled = true;
      return;
    }
    const { network, http } = proxy.faults();
    try {
      proxy.running = await startProxy({
        mappings: [proxy.mapping],
        faults: network,
        ...(proxy.mapping.protocol === 'http' || proxy.mapping.protocol === 'resp'
          ? { http: true, httpFaults: http }
          : {}),
        ...(this.options.seed !== undefined ? { seed: this.options.seed } : {}),
        policy: { ...this.options.policy, argument: 'listen' },
        allowProduction: this.options.allowProduction === true,
      });
    } catch (error) {
      throw bindError(error, proxy.listen);
    }
    proxy.enabled = true;
    proxy.listen = answeredListen(proxy.mapping, proxy.running.ports[0]!);
    // Enabling again binds the port it got, even when it was asked for port 0.
    proxy.mapping = { ...proxy.mapping, listenPort: proxy.running.ports[0]! };
    this.options.log?.(`toxiproxy: proxy ${proxy.name} listening on ${proxy.listen} → ${proxy.upstream}`);
  }

  /** Closes the listener and every connection; `dispose` also ends the running proxy for good. */
  private async stop(proxy: ToxicProxy, dispose = true): Promise<void> {
    proxy.enabled = false;
    const running = proxy.running;
    if (!running) return;
    if (dispose) {
      proxy.running = undefined;
      await running.stop();
    } else await running.setEnabled(false);
  }

  /** The mapping for a proxy's listen and upstream, checked against the policy (400 when refused). */
  private mappingOf(input: ProxyInput): Mapping {
    try {
      const { host, port } = splitListen(input.listen);
      const upstream = /^[a-z][a-z0-9+.-]*:\/\//i.test(input.upstream) ? input.upstream : `tcp://${input.upstream}`;
      const parsed = upstreamMapping(port, upstream);
      const mapping: Mapping = {
        ...parsed,
        text: `${input.name}: ${input.listen} → ${input.upstream}`,
        listenHost: host,
      };
      if (/^[A-Za-z0-9._-]{1,64}$/.test(input.name)) mapping.name = input.name;
      checkMappings([mapping], this.options.policy, 'listen');
      return mapping;
    } catch (error) {
      if (error instanceof InputError) throw new ApiError(400, error.message);
      throw error;
    }
  }
}

/**
 * The mapping from `port` to `upstream`, parsed by the one mapping parser; its refusal is put in a Toxiproxy
 * user's terms (the upstream as written, not our `PORT=HOST:PORT` grammar nobody here wrote).
 */
function upstreamMapping(port: number, upstream: string): Mapping {
  try {
    return parseMapping(`${port}=${upstream}`);
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    const reason = /^invalid proxy mapping "[^"]*": (.*?)\. Accepted forms:/s.exec(error.message)?.[1];
    if (reason === undefined) throw error;
    throw new InputError(
      `${reason.replace(/^remote /, 'upstream ')}; write it as HOST:PORT or [IPv6]:PORT, ` +
        'optionally after a scheme (tcp://, tls://, http://, https://, redis://, rediss://)',
    );
  }
}

interface ProxyInput {
  name: string;
  listen: string;
  upstream: string;
  enabled: boolean;
}

function objectBody(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badBody('the body is a JSON object');
  return body as Record<string, unknown>;
}

/** A proxy's fields, as Toxiproxy reads them: name and upstream required, enabled default true. */
function readProxyInput(body: unknown, where: string): ProxyInput {
  const record = objectBody(body);
  for (const field of ['name', 'listen', 'upstream'] as const) {
    const value = record[field];
    if (value !== undefined && value !== null && typeof value !== 'string') badField(field, 'a string', where);
  }
  if (record['enabled'] !== undefined && record['enabled'] !== null && typeof record['enabled'] !== 'boolean')
    badField('enabled', 'true or false', where);
  const name = (record['name'] as string | undefined) ?? '';
  const upstream = (record['upstream'] as string | undefined) ?? '';
  if (name === '') throw new ApiError(400, `missing required field: name${where}`);
  if (upstream === '') throw new ApiError(400, `missing required field: upstream${where}`);
  return {
    name,
    upstream,
    listen: (record['listen'] as string | undefined) ?? '',
    enabled: (record['enabled'] as boolean | undefined | null) ?? true,
  };
}

function badField(field: string, expected: string, where: string): never {
  throw badBody(`${field} must be ${expected}${where}`);
}

function readAttributes(value: unknown): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw badBody('attributes must be a JSON object');
  return value as Record<string, unknown>;
}

function readToxicity(value: unknown, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 1)
    throw badBody('toxicity must be a number in 0..1');
  return value;
}

function faultOf(json: ToxicJson): ToxicFault {
  try {
    return toxicFault(json);
  } catch (error) {
    if (error instanceof InputError) throw badBody(error.message);
    throw error;
  }
}

/**
 * Toxiproxy's listen: HOST:PORT, [IPv6]:PORT, :PORT or empty (every interface there; here the
 * host defaults to loopback, the bind rule of every faultline listener). `localhost` is 127.0.0.1.
 */
function splitListen(listen: string): { host: string; port: number } {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9._-]*)):(\d{1,5})$/.exec(listen.trim());
  if (listen.trim() === '') return { host: '127.0.0.1', port: 0 };
  if (!match || Number(match[3]) > 65535)
    throw new InputError(`listen ${JSON.stringify(listen)} is not HOST:PORT, [IPv6]:PORT or :PORT`);
  const host = match[1] ?? match[2] ?? '';
  return {
    host: host === '' || host === 'localhost' ? '127.0.0.1' : host,
    port: Number(match[3]),
  };
}

/** The listen address as Toxiproxy answers it once bound: the address and the real port. */
function answeredListen(mapping: Mapping, port: number): string {
  return `${isIP(mapping.listenHost) === 6 ? `[${mapping.listenHost}]` : mapping.listenHost}:${port}`;
}

/** Same listen and upstream (a listen with port 0 always differs, as in Toxiproxy). */
function differs(proxy: ToxicProxy, input: ProxyInput): boolean {
  if (input.upstream !== proxy.upstream) return true;
  let wanted: { host: string; port: number };
  try {
    wanted = splitListen(input.listen);
  } catch {
    return true;
  }
  if (wanted.port === 0) return true;
  return answeredListen({ ...proxy.mapping, listenHost: wanted.host }, wanted.port) !== proxy.listen;
}

/** A listener that could not be bound: Toxiproxy's 500 and wording for a port in use. */
function bindError(error: unknown, listen: string): ApiError {
  if (error instanceof ApiError) return error;
  const message = messageOf(error);
  if (/EADDRINUSE/.test(message)) return new ApiError(500, `listen tcp ${listen}: bind: address already in use`);
  return new ApiError(error instanceof InputError ? 400 : 500, message);
}
