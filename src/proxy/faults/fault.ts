/**
 * The small interface every fault implements, and the pieces they share.
 *
 * A fault is created once from its validated spec (its settings, shared by every connection) and
 * attached to each link it applies to, which gives a `LinkStage` holding that link's own state
 * (Toxiproxy keeps per-connection state apart from the toxic's settings in the same way).
 *
 *   link (one direction of one connection)
 *     chunk read ──▶ [stage] ──▶ [stage] ──▶ … ──▶ pieces written in order, each at its `at` time
 *
 * A stage only ever moves pieces later in time or cuts them into smaller pieces: it never drops,
 * copies, reorders or changes a byte. A holding stage (blackhole) instead stops the link while it
 * is attached.
 */
import { ConfigReader } from '../../config-reader.js';
import { InputError } from '../../kernel/errors.js';
import { MILLISECONDS, type FaultDeclaration, type FieldDeclaration } from './declaration.js';

export { MILLISECONDS };

export type Side = 'client' | 'server';
export type Direction = 'ingress' | 'egress' | 'both';
/** upstream = client → target (requests), downstream = target → client (responses). */
export type LinkDirection = 'upstream' | 'downstream';

/** Fields every fault spec accepts. */
export interface FaultTarget {
  /** Key for counters; defaults to the fault's type. Unique within one fault list. */
  name?: string;
  /** Default 'server' (the proxy↔target socket). */
  side?: Side;
  /** Default 'ingress' (what the proxy reads from that socket). */
  direction?: Direction;
}

/** A slice of the stream and the earliest time (performance.now() ms) it may be written. */
export interface TimedPiece {
  data: Buffer;
  at: number;
}

/** What a stage knows about the chunk it shapes. */
export interface ChunkInfo {
  /** performance.now() when the proxy read the chunk. */
  arrival: number;
  /** The chunk begins a message: data now flows this way after flowing the other way, or first data. */
  messageStart: boolean;
  /** performance.now() when the chunk reached the head of the link (≥ every earlier release). */
  now: number;
  /** Bytes already read behind this chunk on the same link (they "follow" it). */
  followingBytes: number;
}

/** One fault's state on one link. */
export interface LinkStage {
  /** True for a stage that stops the link while attached (blackhole); such a stage does not shape. */
  readonly holds: boolean;
  /**
   * Shapes one chunk's pieces (in stream order) and returns them, each no earlier than before.
   * Only a stage that ends the connection (limit_data, reset_peer) returns fewer bytes than it got.
   */
  shape(pieces: TimedPiece[], chunk: ChunkInfo): TimedPiece[];
  /** How long the end of stream waits after the last byte (slow_close), in ms; absent: 0. */
  endDelayMs?(): number;
  /** The link's source ended while this stage holds the link; the stage may end the connection now. */
  sourceEnded?(): void;
  /** The link stops using this stage (fault removed or connection closed). */
  detach(now: number): void;
}

/** What one fault did, summed over every connection since the proxy started. */
export interface FaultCounters {
  name: string;
  type: string;
  /** Whether the fault is in the current fault list. */
  active: boolean;
  /** Connections the fault was attached to (a connection counts once even with both links). */
  connections: number;
  /** Bytes that went through this fault's stage, client → target. */
  bytesUpstream: number;
  /** Bytes that went through this fault's stage, target → client. */
  bytesDownstream: number;
  /** Times the fault acted: delays applied (latency, jitter), stalls (packet_loss), pieces paced (bandwidth), holds
   * (blackhole). */
  applications: number;
  /** Sum of the delays drawn by latency and jitter, each counted from the chunk's arrival (ms). */
  delayAddedMs: number;
  /** Virtual segment transmissions seen by packet_loss, retransmissions included. */
  segments: number;
  /** Of those, the ones the loss model marked lost. */
  segmentsLost: number;
  /** Head-of-line stall time added by packet_loss (ms). */
  stallMs: number;
  /** Bytes released by the bandwidth token bucket. */
  bytesPaced: number;
  /** Time held, live holds included (ms): a blackhole's summed over connections, a stall's over links. */
  timeHeldMs: number;
  /**
   * On a protocol-aware proxy, the requests that met the fault, in the protocol's own unit: HTTP requests and Redis
   * commands forwarded on a connection of its mapping while it was set (and drawn for that connection). The unit a
   * report gives when it has one: a blackhole "held 291 Redis commands", not "1 connection".
   */
  httpExchanges?: number;
  respCommands?: number;
}

/**
 * What a stage may do to its whole connection, for the faults that end connections (Toxiproxy's
 * timeout, reset_peer and limit_data). Each is idempotent; after the connection closed, a no-op.
 */
export interface LinkControl {
  /** Stop reading this link's source; once the pieces already shaped are written, end the destination and close. */
  finish(): void;
  /** Close both sockets now. */
  close(): void;
  /** Reset both sockets now (TCP RST where the socket allows it). */
  reset(): void;
}

/** Identifies the link a stage is attached to (used to derive its random stream). */
export interface LinkLabel {
  connectionId: number;
  direction: LinkDirection;
  /** The connection's controls (absent where a stage is driven without sockets, as in unit tests). */
  control?: LinkControl;
}

/** A fault created from its spec. */
export interface Fault {
  readonly counters: FaultCounters;
  /**
   * While it applies to a connection not yet dialled, the remote is not dialled (blackhole: the SYN
   * is dropped); the connection holds a stage of it (attached upstream) until then.
   */
  readonly holdsConnect?: boolean;
  attach(link: LinkLabel): LinkStage;
  /** Counters with live figures (ongoing holds) folded in. */
  snapshot(now: number): FaultCounters;
  /**
   * Takes a changed spec of the same type in place, on the stages already attached (their state,
   * such as bytes counted or a hold, lives on); false when this fault cannot, and is recreated.
   */
  update?(spec: { type: string }): boolean;
}

export function emptyCounters(name: string, type: string): FaultCounters {
  return {
    name,
    type,
    active: true,
    connections: 0,
    bytesUpstream: 0,
    bytesDownstream: 0,
    applications: 0,
    delayAddedMs: 0,
    segments: 0,
    segmentsLost: 0,
    stallMs: 0,
    bytesPaced: 0,
    timeHeldMs: 0,
  };
}

/** A fault's spec and counters as its stages read them; `spec` is replaced in place by `Fault.update`. */
export interface LiveFault<S> {
  spec: S;
  readonly counters: FaultCounters;
}

export interface LiveFaultOptions<S> {
  /** The stages read `live.spec` at each use, so a changed spec of the same type is taken in place. */
  updatable?: boolean;
  /** Called after an update took the new spec (stall re-arms its timers). */
  updated?(live: LiveFault<S>): void;
  /** The holds live now (blackhole, stall; a Set or a Map): their time so far is folded into `timeHeldMs`. */
  holds?: { values(): Iterable<{ since: number }> };
}

/**
 * The `Fault` of every network fault: its counters, their snapshot and, when `updatable`, the
 * in-place update; `attach` gives one link its stage, reading spec and counters from `live`.
 */
export function liveFault<S extends { name: string; type: string }>(
  spec: S,
  attach: (link: LinkLabel, live: LiveFault<S>) => LinkStage,
  options: LiveFaultOptions<S> = {},
): Fault {
  const live: LiveFault<S> = { spec, counters: emptyCounters(spec.name, spec.type) };
  const { counters } = live;
  return {
    counters,
    attach: (link) => attach(link, live),
    snapshot(now: number) {
      let held = 0;
      for (const hold of options.holds?.values() ?? []) held += now - hold.since;
      return { ...counters, timeHeldMs: counters.timeHeldMs + held };
    },
    ...(options.updatable && {
      update(next: { type: string }) {
        if (next.type !== live.spec.type) return false;
        live.spec = next as S;
        options.updated?.(live);
        return true;
      },
    }),
  };
}

/** The links a side/direction pair acts on: server+ingress and client+egress are the responses. */
export function linksOf(side: Side, direction: Direction): LinkDirection[] {
  if (direction === 'both') return ['upstream', 'downstream'];
  // server+ingress and client+egress carry responses; server+egress and client+ingress requests.
  const responses = (side === 'server') === (direction === 'ingress');
  return [responses ? 'downstream' : 'upstream'];
}

/** Refuses a list with two faults of one name (default: the type): counters and live updates are keyed by it. */
export function refuseSameNames(faults: readonly { name: string }[], what: string): void {
  const names = new Set<string>();
  for (const fault of faults) {
    if (names.has(fault.name)) throw sameNameError(fault.name, what);
    names.add(fault.name);
  }
}

/** The refusal of a second fault named `name` (a list's, or one added to a list that has it). */
export function sameNameError(name: string, what: string): InputError {
  return new InputError(
    `two ${what} are named ${JSON.stringify(name)}; give each fault of the same type a distinct "name"`,
  );
}

/** Reads and checks the fields of one fault spec; every error names the fault and the field. */
export class SpecReader extends ConfigReader {
  constructor(
    readonly type: string,
    raw: Record<string, unknown>,
  ) {
    super(`${type} fault`, raw, ['type']);
  }

  /** Name, side and direction; `direction` is the fault's default (ingress; a blackhole's is both). */
  target(direction: 'ingress' | 'both' = 'ingress'): Required<FaultTarget> {
    const name = this.take('name');
    if (name !== undefined && (typeof name !== 'string' || name.trim() === '')) this.fail('name', 'a non-empty string');
    return {
      name: (name as string | undefined) ?? this.type,
      side: this.choice('side', ['client', 'server'] as const, 'server'),
      direction: this.choice('direction', ['ingress', 'egress', 'both'] as const, direction),
    };
  }

  /**
   * A fault's whole spec from its declaration: type, name/side/direction (with the fault's default
   * direction) and the declared fields; any other field is refused. Cross-field checks are the fault's.
   */
  spec<S>(fault: Pick<FaultDeclaration, 'type' | 'fields' | 'direction'>): S {
    const spec = { type: fault.type, ...this.target(fault.direction), ...this.declared(fault.fields) };
    this.done();
    return spec as S;
  }

  /** The declared fields (declaration.ts), each with its default and range, in declaration order. */
  declared(fields: readonly FieldDeclaration[]): Record<string, unknown> {
    const spec: Record<string, unknown> = {};
    for (const field of fields) if (!field.argumentOnly) spec[field.key] = this.field(field);
    return spec;
  }

  field(field: FieldDeclaration): unknown {
    const { key, default: fallback } = field;
    const expected = field.expected ?? expectedOf(field);
    switch (field.kind) {
      case 'number':
      case 'integer': {
        const check = {
          min: field.min,
          max: field.max,
          above: field.above,
          integer: field.kind === 'integer',
          expected,
        };
        if (typeof fallback === 'number') return this.number(key, { ...check, default: fallback });
        return field.required || this.has(key) ? this.number(key, check) : (this.take(key), undefined);
      }
      case 'boolean':
        return this.boolean(key, fallback === true);
      case 'enum':
        if (typeof fallback === 'string') return this.choice(key, field.values ?? [], fallback);
        return this.has(key) || field.required ? this.choice(key, field.values ?? [], '' as string) : this.take(key);
      case 'string':
        return this.optionalString(key) ?? fallback;
      case 'strings':
        return field.required || this.has(key) ? this.stringList(key, expected) : (this.take(key), undefined);
    }
  }
}

/** What a field accepts, from its declaration, for a refusal that has no text of its own. */
function expectedOf(field: FieldDeclaration): string {
  if (field.kind === 'boolean') return 'true or false';
  if (field.kind === 'enum') return `one of ${(field.values ?? []).join(', ')}`;
  if (field.kind === 'strings') return 'a list of non-empty strings';
  if (field.kind === 'string') return 'a non-empty string';
  const what = field.kind === 'integer' ? 'a whole number' : 'a number';
  const low = field.above !== undefined ? `above ${field.above}` : field.min !== undefined ? `≥ ${field.min}` : '';
  const high = field.max !== undefined ? `≤ ${field.max}` : '';
  return [what, [low, high].filter(Boolean).join(' and ')].filter(Boolean).join(' ');
}
