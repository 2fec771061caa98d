/**
 * The request faults of a protocol-aware proxy (the eight fault configs of mcp-chaos-monkey's
 * vocabulary: latency, error, rate_limit, timeout, malformed, schema_mismatch, connection_refused,
 * connection_drop) and what each protocol can make of them:
 *
 *   | fault               | HTTP exchange | Redis (RESP) command        | other TCP stream (per message) |
 *   | latency             | yes           | yes (delays the command)    | yes (delays the message)       |
 *   | timeout             | yes           | yes (error reply after hang)| yes (holds, closes after hang) |
 *   | connection_refused  | yes           | yes (reset)                 | yes (reset)                    |
 *   | connection_drop     | yes           | yes (reply cut or withheld) | yes (answer cut or withheld)   |
 *   | error               | yes           | yes (a RESP error reply)    | no                             |
 *   | rate_limit, malformed, schema_mismatch | yes | no                 | no                             |
 *
 * `method` matches the HTTP method, or the Redis command name; `path` exists only in HTTP. A fault
 * that names a mapping it cannot act on is refused when it is set (never accepted to do nothing);
 * one without a target acts on the mappings that can express it, and is refused only when none can.
 */
import { InputError } from '../../kernel/errors.js';
import { unknownTargetError, targetNamesMapping, type Mapping } from '../mapping.js';
import { createRandom, type Random } from '../../kernel/random.js';
import { RetiredFaults } from '../retired.js';
import { requestMatcher, type HttpFaultBehaviour, type HttpFaultCounters } from '../http/fault.js';
import { httpBehaviour, validateHttpFault, validateHttpFaults, type ResolvedHttpFault } from '../http/spec.js';
import { httpFaultInert } from '../http/declarations.js';
import { sameNameError } from '../faults/fault.js';

/** What a mapping's connections speak, as far as request faults are concerned. */
export type TrafficKind = 'http' | 'resp' | 'tcp';

export const KIND_NAMES: Record<TrafficKind, string> = {
  http: 'HTTP',
  resp: 'Redis (RESP)',
  tcp: 'an opaque TCP stream',
};

const TYPES_BY_KIND: Record<TrafficKind, ReadonlySet<string>> = {
  http: new Set([
    'latency',
    'error',
    'rate_limit',
    'timeout',
    'malformed',
    'schema_mismatch',
    'connection_refused',
    'connection_drop',
  ]),
  resp: new Set(['latency', 'timeout', 'error', 'connection_refused', 'connection_drop']),
  tcp: new Set(['latency', 'timeout', 'connection_refused', 'connection_drop']),
};

/** Why `spec` cannot act on traffic of `kind`, or undefined when it can. */
export function inexpressible(spec: ResolvedHttpFault, kind: TrafficKind): string | undefined {
  const kebab = (type: string): string => type.replace(/_/g, '-');
  if (!TYPES_BY_KIND[kind].has(spec.type)) {
    return (
      `${kebab(spec.type)} has no meaning in ${KIND_NAMES[kind]}; ` +
      `faults that act there: ${[...TYPES_BY_KIND[kind]].map(kebab).join(', ')}` +
      // tcp:// declares a stream opaque (no sniffing): a mapping meant to carry HTTP says http://.
      (kind === 'tcp' ? ' (a tcp:// mapping is opaque: declare HTTP with http://, Redis with redis://)' : '')
    );
  }
  if (kind !== 'http' && spec.path !== undefined) return `"path" exists only in HTTP, not in ${KIND_NAMES[kind]}`;
  if (kind === 'tcp' && spec.methods !== undefined)
    return `"method" needs HTTP methods or Redis command names, and ${KIND_NAMES[kind]} has neither`;
  return undefined;
}

export interface RequestFaultEntry {
  spec: ResolvedHttpFault;
  key: string;
  behaviour: HttpFaultBehaviour;
  counters: HttpFaultCounters;
  matches: (method: string, path: string) => boolean;
  randoms: Map<number, Random>;
  /** Its name's place in the list's index (RetiredFaults: the oldest retired go first). */
  seq: number;
  /** Its settings change nothing (its declaration's `inert`: a delay of 0 ms): a won draw counts `unchanged`. */
  inert: boolean;
}

export interface RequestFaultListOptions {
  mappings: readonly Mapping[];
  seed: number | string;
  /** The bound port of each mapping (known once listening). */
  ports(): readonly number[];
  /** The kinds of traffic mapping `index` is known to carry (declared, or seen); empty when unknown. */
  kindsOf(index: number): ReadonlySet<TrafficKind>;
}

export class RequestFaultList {
  private readonly byName = new Map<string, RequestFaultEntry>();
  /** The faults that left the list, whose counters it keeps (bounded). */
  private readonly retired = new RetiredFaults<RequestFaultEntry>((entry) => this.byName.delete(entry.spec.name));
  /** Where the next new name goes in byName's order. */
  private nextSeq = 0;
  /** The list, in order: a Set so one fault goes on or off at no cost that grows with the list. */
  private on = new Set<RequestFaultEntry>();
  /** The list as an array, made again on first use after a change: a walk over it never sees the list change. */
  private listed: RequestFaultEntry[] | undefined = [];

  private active(): RequestFaultEntry[] {
    return (this.listed ??= [...this.on]);
  }

  constructor(private readonly options: RequestFaultListOptions) {}

  /** Replaces the list (validated first; nothing changes on error). Applies from the next request. */
  set(specs: unknown): void {
    const resolved = validateHttpFaults(specs);
    // Only new or changed faults are checked against what the mappings carry: one accepted while a
    // mapping was unknown stays (its counters show whether it acts) rather than block every change.
    resolved.forEach((spec, index) =>
      this.check(
        spec,
        resolved.length > 1 ? `faults[${index}]: ` : '',
        this.byName.get(spec.name)?.key !== JSON.stringify(spec),
      ),
    );
    const next = resolved.map((spec) => this.entryFor(spec));
    this.on = new Set(next);
    this.listed = next;
    const retired: RequestFaultEntry[] = [];
    for (const entry of this.byName.values()) {
      entry.counters.active = this.on.has(entry);
      if (!entry.counters.active) retired.push(entry);
    }
    this.retired.reset(retired);
  }

  /**
   * Puts one fault at the end of the list (from the next request on); throws (changing nothing) on an invalid spec
   * or a name the list has. Only `spec` is checked, as `set` would check it in a list.
   */
  add(spec: unknown): void {
    const resolved = validateHttpFault(spec);
    const previous = this.byName.get(resolved.name);
    if (previous?.counters.active) throw sameNameError(resolved.name, 'HTTP faults');
    this.check(resolved, '', previous?.key !== JSON.stringify(resolved));
    // A retired fault of that name is on again, or replaced.
    if (previous) this.retired.delete(previous);
    const entry = this.entryFor(resolved);
    entry.counters.active = true;
    this.on.add(entry);
    this.listed = undefined;
  }

  /** Takes the faults named `names` off the list (their counters retire); false when none was on it. */
  remove(names: Iterable<string>): boolean {
    const gone = new Set<RequestFaultEntry>();
    for (const name of names) {
      const entry = this.byName.get(name);
      if (entry?.counters.active) gone.add(entry);
    }
    if (gone.size === 0) return false;
    for (const entry of gone) this.on.delete(entry);
    this.listed = undefined;
    for (const entry of gone) {
      entry.counters.active = false;
      this.retired.add(entry);
    }
    return true;
  }

  /** The entry for a checked spec: the one of its name when the spec did not change, else a new one. */
  private entryFor(spec: ResolvedHttpFault): RequestFaultEntry {
    const key = JSON.stringify(spec);
    const previous = this.byName.get(spec.name);
    if (previous && previous.key === key) return previous;
    const counters: HttpFaultCounters = {
      name: spec.name,
      type: spec.type,
      target: spec.target ?? null,
      active: true,
      requests: 0,
      applications: 0,
      passes: 0,
      oversized: 0,
      unchanged: 0,
    };
    if (previous && previous.spec.type === spec.type)
      Object.assign(counters, previous.counters, { target: spec.target ?? null });
    const entry: RequestFaultEntry = {
      spec,
      key,
      behaviour: httpBehaviour(spec),
      counters,
      matches: requestMatcher(spec),
      randoms: new Map(),
      seq: previous?.seq ?? this.nextSeq++,
      inert: httpFaultInert(spec) !== undefined,
    };
    this.byName.set(spec.name, entry);
    return entry;
  }

  counters(): HttpFaultCounters[] {
    return [...this.byName.values()].map((entry) => ({ ...entry.counters }));
  }

  /** Whether a fault's `target` names mapping `index` (see targetNamesMapping). */
  targets(target: string | undefined, index: number): boolean {
    return (
      target === undefined || targetNamesMapping(target, this.options.mappings[index]!, this.options.ports()[index])
    );
  }

  /**
   * The fault draw for one request of mapping `index` on `kind` traffic, one fault at a time and
   * in list order: each fault that applies and matches is counted, and yielded when its draw wins
   * (one whose settings change nothing counts the won draw `unchanged` and is not yielded: the
   * exchange goes on as without it). Lazy, so a fault after one that ends the request is neither
   * drawn nor counted (the list is the one current when the request arrived).
   */
  *draw(index: number, kind: TrafficKind, method: string, path: string): Generator<RequestFaultEntry> {
    for (const entry of this.active()) {
      if (!this.targets(entry.spec.target, index) || !entry.matches(method, path)) continue;
      if (kind !== 'http' && inexpressible(entry.spec, kind) !== undefined) continue;
      entry.counters.requests++;
      if (!this.randomOf(entry, index).chance(entry.spec.probability)) {
        entry.counters.passes++;
        continue;
      }
      if (entry.inert) {
        entry.counters.unchanged++;
        continue;
      }
      entry.counters.applications++;
      yield entry;
    }
  }

  private randomOf(entry: RequestFaultEntry, index: number): Random {
    let random = entry.randoms.get(index);
    if (!random) {
      random = createRandom(this.options.seed, `http/${entry.spec.name}/${index}`);
      entry.randoms.set(index, random);
    }
    return random;
  }

  /** Refuses a target that names no mapping, and a fault that would do nothing where it is aimed. */
  private check(spec: ResolvedHttpFault, where: string, isNew: boolean): void {
    const { mappings } = this.options;
    if (spec.target !== undefined && !mappings.some((_, index) => this.targets(spec.target, index))) {
      throw unknownTargetError(spec.target, mappings, (index) => this.options.ports()[index], where);
    }
    if (!isNew) return;
    const reasons: string[] = [];
    let acts = false;
    mappings.forEach((mapping, index) => {
      if (!this.targets(spec.target, index)) return;
      const kinds = this.options.kindsOf(index);
      const problems = [...kinds].map((kind) => inexpressible(spec, kind)).filter((problem) => problem !== undefined);
      // A mapping that carried several kinds (HTTP, and a client that sent nothing within the sniff
      // window) is one the fault can act on when any of its kinds can express it.
      if (problems.length < kinds.size || kinds.size === 0) acts = true;
      else
        reasons.push(
          `mapping ${JSON.stringify(mapping.text)} carries ` +
            `${[...kinds].map((kind) => KIND_NAMES[kind]).join(' and ')}: ${problems[0]}`,
        );
    });
    if (spec.target !== undefined ? reasons.length > 0 : !acts) {
      const config = JSON.stringify({
        type: spec.type.replace(/_/g, '-'),
        ...(spec.target !== undefined ? { target: spec.target } : {}),
      });
      throw new InputError(
        `${where}the fault ${config} cannot act on ` +
          `${reasons.length > 1 ? 'any mapping' : 'its mapping'}: ${reasons.join('; ')}`,
      );
    }
  }
}
