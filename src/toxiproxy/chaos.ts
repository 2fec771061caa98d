/**
 * The admin API's /chaos routes over the Toxiproxy API's proxies (`faultline toxiproxy
 * --admin-token`): one registry, two spellings. A /chaos/inject on target `p1` adds a toxic to
 * proxy p1, named by the fault id, its type and attributes the fault config as written; so
 * `GET /proxies/p1/toxics` shows it, DELETE …/toxics/{id} removes it, and /chaos/status lists
 * every toxic of every proxy with what it acted on (a toxic added through the
 * Toxiproxy API has the id `proxy/toxic`).
 *
 *   inject(target = proxy name, config, durationMs?) → id      clear(id)      clearAll()      status()
 */
import { InputError } from '../kernel/errors.js';
import { linksOf } from '../proxy/faults/fault.js';
import { parseFaultConfig } from '../proxy/control/fault-config.js';
import { checkDurationMs, faultId, noCount, type FaultControl, type FaultStatus } from '../proxy/control/registry.js';
import { actedCount } from '../proxy/run-record.js';
import type { FaultSpec } from '../proxy/faults/index.js';
import type { HttpFaultSpec } from '../proxy/http/spec.js';
import { ApiError, type ProxyCollection, type Toxic, type ToxicProxy } from './proxies.js';

export class ToxicChaos implements FaultControl {
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(private readonly collection: ProxyCollection) {}

  inject(target: unknown, config: unknown, durationMs?: unknown): string {
    if (typeof target !== 'string' || target.trim() === '')
      throw new InputError('target: a non-empty string, the name of a proxy');
    const name = target.trim().replace(/^#/, '');
    const names = this.collection.all().map((proxy) => proxy.name);
    if (!names.includes(name))
      throw new InputError(`target: "${target}" names no proxy; proxies: ${names.join(', ') || '(none)'}`);
    const expiry = checkDurationMs(durationMs);
    const parsed = parseFaultConfig(config);
    const { type, target: own, ...fields } = config as Record<string, unknown>;
    if (own !== undefined && own !== name && own !== `#${name}`)
      throw new InputError(`config.target: ${JSON.stringify(own)} conflicts with target "${target}"`);
    const id = faultId(name);
    const spec = { ...parsed.spec, name: id } as Record<string, unknown>;
    delete spec['target'];
    const links =
      parsed.kind === 'network'
        ? linksOf((spec['side'] as 'client' | 'server') ?? 'server', (spec['direction'] as never) ?? 'ingress')
        : ['downstream'];
    const toxic: Toxic = {
      json: {
        attributes: fields,
        name: id,
        type: String(type ?? ''),
        stream: links.length === 2 ? 'both' : links[0]!,
        toxicity: 1,
      },
      fault:
        parsed.kind === 'network'
          ? { kind: 'network', spec: spec as unknown as FaultSpec }
          : { kind: 'http', spec: spec as HttpFaultSpec },
      injected: true,
    };
    try {
      this.collection.addMade(name, toxic);
    } catch (error) {
      if (error instanceof ApiError) throw new InputError(error.message);
      if (error instanceof InputError) throw new InputError(`config: ${error.message}`);
      throw error;
    }
    if (expiry !== undefined) {
      const timer = setTimeout(() => {
        this.timers.delete(id);
        void this.collection.serial(() => this.clear(id));
      }, expiry);
      timer.unref();
      this.timers.set(id, timer);
    }
    return id;
  }

  clear(id: unknown): boolean {
    if (typeof id !== 'string') return false;
    for (const proxy of this.collection.all()) {
      const toxic = proxy.toxics.find((t) => idOf(proxy, t) === id);
      if (!toxic) continue;
      clearTimeout(this.timers.get(id));
      this.timers.delete(id);
      this.collection.removeToxic(proxy.name, toxic.json.name);
      return true;
    }
    return false;
  }

  /** Removes every toxic of every proxy (the proxies stay as they are, unlike POST /reset). */
  clearAll(): number {
    let count = 0;
    for (const proxy of this.collection.all())
      for (const toxic of [...proxy.toxics]) if (this.clear(idOf(proxy, toxic))) count++;
    return count;
  }

  status(): FaultStatus[] {
    return this.collection.all().flatMap((proxy) => {
      const counters = proxy.counters();
      return proxy.toxics.map((toxic) => {
        const { count, unit } = (counters && actedCount(counters, toxic.json.name, 0)) ?? noCount;
        return { id: idOf(proxy, toxic), target: proxy.name, type: toxic.json.type, requestCount: count, unit };
      });
    });
  }

  /** Stops every expiry timer (SIGTERM). */
  dispose(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }
}

/** A toxic's id on the /chaos routes: an injected fault's own id, else `proxy/toxic`. */
function idOf(proxy: ToxicProxy, toxic: Toxic): string {
  return toxic.injected ? toxic.json.name : `${proxy.name}/${toxic.json.name}`;
}
