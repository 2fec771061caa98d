/**
 * A proxy's network fault list: the faults set (validated, each created once), the counters of
 * those retired, and which stages each link of each connection carries.
 *
 *   set(specs)  → validate all, keep a fault whose spec did not change (its stages and counters
 *                 live on), create the others, then re-attach every live connection's links
 *   add(spec) / remove(names) → one fault onto the end of the list, some off it: only the added spec
 *                 is validated, so a change costs the same however long the list (a registry's inject)
 *   attach(connection) → each link gets the stages of the faults that apply to its direction and mapping
 *   connectHolds(connection) → before a connection is dialled: the faults that keep it from dialling
 *
 * A spec may carry `target` (a mapping's port or #name) and `chance` (0..1, default 1: the chance
 * that a connection gets the fault, drawn once per connection from the seed, Toxiproxy's
 * toxicity): they say where the fault applies, not what it does, so they are split off before the
 * fault validates the rest. A spec changed in its fields only is taken in place by a fault that
 * can (`Fault.update`), so live connections keep their stages' state (bytes counted, holds).
 */
import { InputError } from '../kernel/errors.js';
import {
  linksOf,
  sameNameError,
  type Fault,
  type FaultCounters,
  type LinkControl,
  type LinkDirection,
} from './faults/fault.js';
import { createFault, validateFault, validateFaults, type FaultSpec, type ResolvedFault } from './faults/index.js';
import type { AttachedStage, Link } from './link.js';
import { createRandom } from '../kernel/random.js';
import { RetiredFaults } from './retired.js';

interface FaultEntry {
  spec: ResolvedFault;
  key: string;
  fault: Fault;
  /** The mapping it is limited to (a port or #name), or every mapping. */
  target: string | undefined;
  /** The chance that a connection gets it (1: every connection). */
  chance: number;
  /** Its name's place in the list's index (RetiredFaults: the oldest retired go first). */
  seq: number;
}

/** What the list needs to know of a connection to attach stages to it. */
export interface FaultedConnection {
  id: number;
  mappingIndex: number;
  links: Record<LinkDirection, Link> | undefined;
  /** Faults already counted as attached to this connection. */
  countedFaults: Set<Fault>;
  /** Per fault with a chance below 1, whether this connection drew it (kept for the connection's life). */
  faultDraws?: Map<Fault, boolean>;
  /** What a stage may do to the connection (finish, close, reset). */
  control?(direction: LinkDirection): LinkControl;
}

export interface FaultListOptions {
  seed: number | string;
  clock: () => number;
  mappingCount: number;
  /** Whether `target` names mapping `index`. */
  targets(target: string, index: number): boolean;
  /** The refusal of a target that names no mapping (`where`: e.g. "faults[1]: "). */
  unknownTarget(target: string, where: string): Error;
}

export class NetworkFaultList {
  private readonly byName = new Map<string, FaultEntry>();
  /** The faults that left the list, whose counters it keeps (bounded). */
  private readonly retired = new RetiredFaults<FaultEntry>((entry) => this.byName.delete(entry.spec.name));
  /** Where the next new name goes in byName's order. */
  private nextSeq = 0;
  /** The list, in order: a Set so one fault goes on or off at no cost that grows with the list. */
  private on = new Set<FaultEntry>();
  /** The list as an array, made again on first use after a change: a walk over it never sees the list change. */
  private listed: FaultEntry[] | undefined = [];

  private active(): FaultEntry[] {
    return (this.listed ??= [...this.on]);
  }

  constructor(private readonly options: FaultListOptions) {}

  /** Replaces the list; throws (changing nothing) on an invalid spec. Live links are re-attached by the caller. */
  set(specs: readonly FaultSpec[]): void {
    const list = Array.isArray(specs) ? specs : [];
    const targets = list.map((spec, index) => this.targetOf(spec, index, list.length));
    const chances = list.map((spec, index) => chanceOf(spec, list.length > 1 ? `faults[${index}]: ` : ''));
    const resolved = validateFaults(Array.isArray(specs) ? specs.map((spec) => withoutPlacement(spec)) : specs);
    const next = resolved.map((spec, index) => this.entryFor(spec, targets[index], chances[index]!));
    this.on = new Set(next);
    this.listed = next;
    const retired: FaultEntry[] = [];
    for (const entry of this.byName.values()) {
      entry.fault.counters.active = this.on.has(entry);
      if (!entry.fault.counters.active) retired.push(entry);
    }
    this.retired.reset(retired);
  }

  /**
   * Puts one fault at the end of the list; throws (changing nothing) on an invalid spec or a name the list has.
   * Only `spec` is validated, as `set` would validate it in a list. Live links are re-attached by the caller.
   */
  add(spec: FaultSpec): void {
    const target = this.targetOf(spec, 0, 1);
    const chance = chanceOf(spec, '');
    const resolved = validateFault(withoutPlacement(spec));
    const previous = this.byName.get(resolved.name);
    if (previous?.fault.counters.active) throw sameNameError(resolved.name, 'faults');
    // A retired fault of that name is on again, or replaced.
    if (previous) this.retired.delete(previous);
    const entry = this.entryFor(resolved, target, chance);
    entry.fault.counters.active = true;
    this.on.add(entry);
    this.listed = undefined;
  }

  /** Takes the faults named `names` off the list (their counters retire); false when none was on it. */
  remove(names: Iterable<string>): boolean {
    const gone = new Set<FaultEntry>();
    for (const name of names) {
      const entry = this.byName.get(name);
      if (entry?.fault.counters.active) gone.add(entry);
    }
    if (gone.size === 0) return false;
    for (const entry of gone) this.on.delete(entry);
    this.listed = undefined;
    for (const entry of gone) {
      entry.fault.counters.active = false;
      this.retired.add(entry);
    }
    return true;
  }

  /**
   * The entry for a validated spec: the one of its name when its spec did not change (its stages and counters live
   * on) or it can take the change in place, else a new fault (with the counters of a same-typed predecessor).
   */
  private entryFor(spec: ResolvedFault, target: string | undefined, chance: number): FaultEntry {
    const key = JSON.stringify([spec, target]);
    const previous = this.byName.get(spec.name);
    if (previous && (previous.key === key || this.updatedInPlace(previous, spec, target))) {
      previous.chance = chance;
      return previous;
    }
    const fault = createFault(spec, this.options.seed, this.options.clock);
    if (previous && previous.spec.type === spec.type) Object.assign(fault.counters, previous.fault.counters);
    const entry = { spec, key, fault, target, chance, seq: previous?.seq ?? this.nextSeq++ };
    this.byName.set(spec.name, entry);
    return entry;
  }

  private targetOf(spec: FaultSpec, index: number, count: number): string | undefined {
    const target = (spec as { target?: unknown } | null)?.target;
    const where = count > 1 ? `faults[${index}]: ` : '';
    if (target !== undefined && (typeof target !== 'string' || target.trim() === ''))
      throw new InputError(`${where}a fault's target must be a mapping's local port or #name, as a string`);
    if (target !== undefined && !this.namesAnyMapping(target)) throw this.options.unknownTarget(target, where);
    return target as string | undefined;
  }

  /** A fault still on the list whose fields changed, taken by the live fault in place (same type and target). */
  private updatedInPlace(previous: FaultEntry, spec: ResolvedFault, target: string | undefined): boolean {
    if (!previous.fault.counters.active || previous.spec.type !== spec.type || previous.target !== target) return false;
    if (!previous.fault.update?.(spec)) return false;
    previous.spec = spec;
    previous.key = JSON.stringify([spec, target]);
    return true;
  }

  /** Gives each link of `connection` the stages of the faults that apply to it now (kept stages keep their state). */
  attach(connection: FaultedConnection): void {
    if (!connection.links) return;
    for (const link of Object.values(connection.links)) {
      // By fault, so re-attaching a long list costs its length, not its square.
      const current = new Map(link.attached.map((attached) => [attached.fault, attached]));
      const stages: AttachedStage[] = [];
      for (const { spec, fault, target, chance } of this.active()) {
        if (!linksOf(spec.side, spec.direction).includes(link.direction)) continue;
        if (target !== undefined && !this.options.targets(target, connection.mappingIndex)) continue;
        if (!this.drawn(connection, fault, spec.name, chance)) continue;
        const existing = current.get(fault);
        const label = {
          connectionId: connection.id,
          direction: link.direction,
          ...(connection.control ? { control: connection.control(link.direction) } : {}),
        };
        stages.push(existing ?? { fault, stage: fault.attach(label) });
        this.count(connection, fault);
      }
      link.setStages(stages);
    }
  }

  /**
   * What keeps `connection` (not dialled yet) from dialling now: a stage of each fault that holds
   * new connections (blackhole: a dropped SYN reaches no server, whichever direction it drops) and
   * applies to its mapping. `current` are the holds it had: kept ones keep their state, the others
   * are detached. Empty: dial now.
   */
  connectHolds(connection: FaultedConnection, current: readonly AttachedStage[]): AttachedStage[] {
    const holds: AttachedStage[] = [];
    for (const { spec, fault, target, chance } of this.active()) {
      if (!fault.holdsConnect) continue;
      if (target !== undefined && !this.options.targets(target, connection.mappingIndex)) continue;
      if (!this.drawn(connection, fault, spec.name, chance)) continue;
      const existing = current.find((s) => s.fault === fault);
      holds.push(existing ?? { fault, stage: fault.attach({ connectionId: connection.id, direction: 'upstream' }) });
      this.count(connection, fault);
    }
    const now = this.options.clock();
    for (const old of current) if (!holds.includes(old)) old.stage.detach(now);
    return holds;
  }

  /** Counts `connection` once in `fault`'s connections. */
  private count(connection: FaultedConnection, fault: Fault): void {
    if (connection.countedFaults.has(fault)) return;
    connection.countedFaults.add(fault);
    fault.counters.connections++;
  }

  /**
   * A request went onto `connection`'s TCP path (an HTTP request, a Redis command): each fault set on its mapping
   * counts it, in that unit, whatever direction it acts on (a held reply holds the command as surely as a held
   * command). The same faults `attach` gives the connection's links, so the count is of what met the fault.
   */
  countRequest(connection: FaultedConnection, unit: 'httpExchanges' | 'respCommands'): void {
    for (const { spec, fault, target, chance } of this.active()) {
      if (target !== undefined && !this.options.targets(target, connection.mappingIndex)) continue;
      if (!this.drawn(connection, fault, spec.name, chance)) continue;
      fault.counters[unit] = (fault.counters[unit] ?? 0) + 1;
    }
  }

  /** Whether `connection` gets `fault`: always at chance 1; else drawn once, from the seed, per connection. */
  private drawn(connection: FaultedConnection, fault: Fault, name: string, chance: number): boolean {
    if (chance >= 1) return true;
    const draws = (connection.faultDraws ??= new Map());
    let drawn = draws.get(fault);
    if (drawn === undefined) {
      drawn = createRandom(this.options.seed, `${name}/${connection.id}/chance`).chance(chance);
      draws.set(fault, drawn);
    }
    return drawn;
  }

  /** Every fault's counters, current and retired, with live figures folded in. */
  counters(now: number): FaultCounters[] {
    return [...this.byName.values()].map((entry) => entry.fault.snapshot(now));
  }

  private namesAnyMapping(target: string): boolean {
    for (let index = 0; index < this.options.mappingCount; index++)
      if (this.options.targets(target, index)) return true;
    return false;
  }
}

function withoutPlacement(spec: FaultSpec): FaultSpec {
  if (typeof spec !== 'object' || spec === null || !('target' in spec || 'chance' in spec)) return spec;
  const { target: _target, chance: _chance, ...rest } = spec as FaultSpec & { target?: unknown; chance?: unknown };
  return rest as FaultSpec;
}

/** A spec's `chance`: a number in 0..1, default 1. */
function chanceOf(spec: FaultSpec, where: string): number {
  const chance = (spec as { chance?: unknown } | null)?.chance;
  if (chance === undefined) return 1;
  if (typeof chance !== 'number' || !Number.isFinite(chance) || chance < 0 || chance > 1)
    throw new InputError(`${where}a fault's chance is a number in 0..1 (the chance a connection gets it)`);
  return chance;
}
