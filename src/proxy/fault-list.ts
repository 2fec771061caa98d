/**
 * A proxy's network fault list: the faults set (validated, each created once), the counters of
 * those retired, and which stages each link of each connection carries.
 *
 *   set(specs)  → validate all, keep a fault whose spec did not change (its stages and counters
 *                 live on), create the others, then re-attach every live connection's links
 *   attach(connection) → each link gets the stages of the faults that apply to its direction and mapping
 *
 * A spec may carry `target` (a mapping's port or #name): that is the proxy's business, not the
 * fault's, so it is split off before the fault validates the rest.
 */
import { ToolInputError } from '../errors.js';
import { linksOf, type Fault, type FaultCounters, type LinkDirection } from './faults/fault.js';
import { createFault, validateFaults, type FaultSpec, type ResolvedFault } from './faults/index.js';
import type { AttachedStage, Link } from './link.js';
import { pruneRetired } from './retired.js';

interface FaultEntry {
  spec: ResolvedFault;
  key: string;
  fault: Fault;
  /** The mapping it is limited to (a port or #name), or every mapping. */
  target: string | undefined;
}

/** What the list needs to know of a connection to attach stages to it. */
export interface FaultedConnection {
  id: number;
  mappingIndex: number;
  links: Record<LinkDirection, Link> | undefined;
  /** Faults already counted as attached to this connection. */
  countedFaults: Set<Fault>;
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
  private active: FaultEntry[] = [];

  constructor(private readonly options: FaultListOptions) {}

  /** Replaces the list; throws (changing nothing) on an invalid spec. Live links are re-attached by the caller. */
  set(specs: readonly FaultSpec[]): void {
    const targets = (Array.isArray(specs) ? specs : []).map((spec, index, all) => {
      const target = (spec as { target?: unknown } | null)?.target;
      const where = all.length > 1 ? `faults[${index}]: ` : '';
      if (target !== undefined && (typeof target !== 'string' || target.trim() === ''))
        throw new ToolInputError(`${where}a fault's target must be a mapping's local port or #name, as a string`);
      if (target !== undefined && !this.namesAnyMapping(target)) throw this.options.unknownTarget(target, where);
      return target as string | undefined;
    });
    const resolved = validateFaults(Array.isArray(specs) ? specs.map((spec) => withoutTarget(spec)) : specs);
    const next: FaultEntry[] = [];
    for (const [index, spec] of resolved.entries()) {
      const target = targets[index];
      const key = JSON.stringify([spec, target]);
      const previous = this.byName.get(spec.name);
      if (previous && previous.key === key) {
        next.push(previous);
        continue;
      }
      const fault = createFault(spec, this.options.seed, this.options.clock);
      if (previous && previous.spec.type === spec.type) Object.assign(fault.counters, previous.fault.counters);
      const entry = { spec, key, fault, target };
      this.byName.set(spec.name, entry);
      next.push(entry);
    }
    this.active = next;
    for (const entry of this.byName.values()) entry.fault.counters.active = next.includes(entry);
    pruneRetired(this.byName, (entry) => entry.fault.counters.active);
  }

  /** Gives each link of `connection` the stages of the faults that apply to it now (kept stages keep their state). */
  attach(connection: FaultedConnection): void {
    if (!connection.links) return;
    for (const link of Object.values(connection.links)) {
      const current = link.attached;
      const stages: AttachedStage[] = [];
      for (const { spec, fault, target } of this.active) {
        if (!linksOf(spec.side, spec.direction).includes(link.direction)) continue;
        if (target !== undefined && !this.options.targets(target, connection.mappingIndex)) continue;
        const existing = current.find((s) => s.fault === fault);
        stages.push(
          existing ?? { fault, stage: fault.attach({ connectionId: connection.id, direction: link.direction }) },
        );
        if (!connection.countedFaults.has(fault)) {
          connection.countedFaults.add(fault);
          fault.counters.connections++;
        }
      }
      link.setStages(stages);
    }
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

function withoutTarget(spec: FaultSpec): FaultSpec {
  if (typeof spec !== 'object' || spec === null || !('target' in spec)) return spec;
  const { target: _target, ...rest } = spec as FaultSpec & { target?: unknown };
  return rest as FaultSpec;
}
