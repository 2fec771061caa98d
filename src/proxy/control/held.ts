/**
 * Proxies an agent holds across MCP calls: started by one call, faults changed by others, read,
 * stopped. Each stops by itself after its ttl; all stop with the server (stopAll). How many may be
 * held at once, and for how long, is capped.
 */
import { randomBytes } from 'node:crypto';
import { InputError } from '../../kernel/errors.js';
import { HELD_LIMITS } from '../vocabulary.js';
import type { ProxyCounters, RunningProxy, ProxyOptions } from '../proxy.js';
import { assembleProxy, describeEvent, faultConfigs } from './assemble.js';
import type { TargetPolicy } from '../../target-policy.js';

export { HELD_LIMITS };

export interface HeldStatus {
  id: string;
  listening: Array<{ mapping: string; address: string }>;
  seed: number | string;
  startedAt: string;
  expiresAt: string;
  faults: string[];
  counters: ProxyCounters;
  recentEvents: string[];
}

interface Held {
  id: string;
  proxy: RunningProxy;
  timer: NodeJS.Timeout;
  startedAt: Date;
  expiresAt: Date;
  faults: string[];
  events: string[];
}

export interface HeldStartOptions {
  mappings: string[];
  /** Fault configs as JSON texts (network or HTTP faults, any spelling). */
  faults: string[];
  ttlMs?: number | undefined;
  seed?: number | undefined;
  /** Accept any certificate from a TLS remote (a dependency with a self-signed one); default false. */
  insecureTls?: boolean | undefined;
  lookup?: ProxyOptions['lookup'];
  /** The target policy for the mappings (the server's --allow-remote-targets and bind flags). */
  policy?: TargetPolicy;
  /** The server's --allow-production (the proxy refuses to start where the environment says production). */
  allowProduction?: boolean;
}

/**
 * Held proxies of the whole process (started or starting): each MCP connection or HTTP session
 * has its own HeldProxies, and without this an agent opening sessions could hold 8 per session.
 */
const processWide = { held: 0 };

/** Too many proxies held: the message ends in "stop … first", where the door says how. */
export class HeldLimitError extends InputError {}

export class HeldProxies {
  private readonly held = new Map<string, Held>();
  private stopped = false;
  /** Starts under way: they count against the cap before their proxy exists. */
  private starting = 0;

  constructor(private readonly log: (line: string) => void = () => {}) {}

  get size(): number {
    return this.held.size;
  }

  async start(options: HeldStartOptions): Promise<HeldStatus> {
    if (this.stopped) throw new InputError('the server is stopping');
    if (this.held.size + this.starting >= HELD_LIMITS.maxHeld) {
      throw new HeldLimitError(
        `at most ${HELD_LIMITS.maxHeld} proxies may be held at once (held: ${[...this.held.keys()].join(', ')}); ` +
          'stop one first',
      );
    }
    if (options.mappings.length === 0 || options.mappings.length > HELD_LIMITS.maxMappings)
      throw new InputError(`proxies: 1 to ${HELD_LIMITS.maxMappings} mappings`);
    if (processWide.held >= HELD_LIMITS.maxHeldPerProcess) {
      throw new HeldLimitError(
        `at most ${HELD_LIMITS.maxHeldPerProcess} proxies may be held by ` +
          'this server over all its connections; let their ttl end or stop some first',
      );
    }
    const ttlMs = options.ttlMs ?? HELD_LIMITS.defaultTtlMs;
    if (!Number.isFinite(ttlMs) || ttlMs <= 0 || ttlMs > HELD_LIMITS.maxTtlMs)
      throw new InputError(`ttl: seconds, more than 0 and at most ${HELD_LIMITS.maxTtlMs / 1000}`);
    checkFaultCount(options.faults);
    const id = `proxy-${randomBytes(4).toString('hex')}`;
    const events: string[] = [];
    this.starting++;
    processWide.held++;
    let proxy: RunningProxy;
    try {
      ({ proxy } = await assembleProxy({
        mappings: options.mappings,
        mappingLabel: (index) => `proxies[${index}]`,
        configs: options.faults,
        configLabel: (index) => `faults[${index}]`,
        http: true,
        ...(options.seed !== undefined ? { seed: options.seed } : {}),
        ...(options.insecureTls ? { tls: { rejectUnauthorized: false } } : {}),
        ...(options.lookup ? { lookup: options.lookup } : {}),
        // An agent names these remotes: the same target policy as a scenario's `proxies`
        // (loopback/private unless allowed, never link-local or metadata, loopback binds).
        ...(options.policy ? { policy: { ...options.policy, argument: 'proxies' } } : {}),
        allowProduction: options.allowProduction === true,
        onEvent: (event) => {
          events.push(describeEvent(event));
          if (events.length > HELD_LIMITS.events) events.shift();
        },
      }));
    } catch (error) {
      processWide.held--;
      throw error;
    } finally {
      this.starting--;
    }
    if (this.stopped) {
      // The server closed while this one was starting: it must not outlive it.
      processWide.held--;
      await proxy.stop();
      throw new InputError('the server is stopping');
    }
    const startedAt = new Date();
    const entry: Held = {
      id,
      proxy,
      startedAt,
      expiresAt: new Date(startedAt.getTime() + ttlMs),
      faults: [...options.faults],
      events,
      timer: setTimeout(() => {
        this.log(`held proxy ${id}: ttl reached, stopping`);
        void this.stop(id);
      }, ttlMs),
    };
    entry.timer.unref();
    this.held.set(id, entry);
    this.log(`held proxy ${id} started on ${proxy.ports.join(', ')} for ${ttlMs / 1000} s`);
    return this.statusOf(entry);
  }

  setFaults(id: string, faults: string[]): HeldStatus {
    const entry = this.get(id);
    checkFaultCount(faults);
    const { network, http } = faultConfigs(
      faults,
      entry.proxy.mappings,
      (index) => `faults[${index}]`,
      (index) => entry.proxy.ports[index],
    );
    entry.proxy.setFaults(network);
    entry.proxy.setHttpFaults(http);
    entry.faults = [...faults];
    return this.statusOf(entry);
  }

  status(id: string): HeldStatus {
    return this.statusOf(this.get(id));
  }

  /** Stops one proxy; the final status, or undefined when no such proxy is held. */
  async stop(id: string): Promise<HeldStatus | undefined> {
    const entry = this.held.get(id);
    if (!entry) return undefined;
    this.held.delete(id);
    processWide.held--;
    clearTimeout(entry.timer);
    await entry.proxy.stop();
    this.log(`held proxy ${id} stopped`);
    return this.statusOf(entry);
  }

  async stopAll(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.held.keys()].map((id) => this.stop(id)));
  }

  ids(): string[] {
    return [...this.held.keys()];
  }

  private get(id: string): Held {
    const entry = this.held.get(id);
    if (!entry)
      throw new InputError(
        `id: no held proxy ${JSON.stringify(id)} (it may have reached its ` +
          `ttl); held: ${[...this.held.keys()].join(', ') || 'none'}`,
      );
    return entry;
  }

  private statusOf(entry: Held): HeldStatus {
    return {
      id: entry.id,
      listening: entry.proxy.mappings.map((mapping, index) => {
        const host = mapping.listenHost.includes(':') ? `[${mapping.listenHost}]` : mapping.listenHost;
        return { mapping: mapping.text, address: `${host}:${entry.proxy.ports[index]}` };
      }),
      seed: entry.proxy.seed,
      startedAt: entry.startedAt.toISOString(),
      expiresAt: entry.expiresAt.toISOString(),
      faults: entry.faults,
      counters: entry.proxy.counters(),
      recentEvents: [...entry.events],
    };
  }
}

function checkFaultCount(faults: readonly string[]): void {
  if (faults.length > HELD_LIMITS.maxFaults) throw new InputError(`faults: at most ${HELD_LIMITS.maxFaults}`);
}
