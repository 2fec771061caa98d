/**
 * A fault declared once: its fields (the spec key, the other spellings, unit, default, range, one
 * line of help), the argument and flag names the doors give them, and whether it acted. Every door
 * is derived from the declaration (src/proxy/faults/README.md lists them): the spec readers, the
 * admin API's and --http-fault's reader (spellings), the scenario tools' zod shapes, the flags of
 * `faultline run` and `faultline proxy`, the experiment JSON Schema and the docs' fault tables.
 *
 * A leaf module (type imports only, erased when compiled), as every declaration file must be: the
 * MCP server builds its tool list from them without loading the proxy.
 */

/** How a field's value is written. `strings`: a list of non-empty strings (a comma-separated string too). */
export type FieldKind = 'number' | 'integer' | 'boolean' | 'enum' | 'string' | 'strings';

/** fault's argument for a field in the scenario tools and `faultline run` (`deviation` for deviationMs). */
export interface ArgumentDeclaration {
  /** snake_case; `faultline run` spells it with dashes (`--loss-rate`). */
  readonly name: string;
  /** The tool schema's description, default included. */
  readonly help: string;
  /** The scenario's default when it is not the spec's (a scenario always injects something). */
  readonly default?: number | string | boolean;
  /** Published bounds when they differ from the field's (an argument in another unit). */
  readonly min?: number;
  readonly max?: number;
  /** The argument naming the unit this one is in (bandwidth's `rate` in `unit`). */
  readonly unitArgument?: string;
}

export interface FieldDeclaration {
  /** The key in the fault spec, as the implementation reads it: camelCase (network) or snake_case (HTTP). */
  readonly key: string;
  readonly kind: FieldKind;
  /** One line: what it does. */
  readonly help: string;
  readonly unit?: 'ms' | 'µs' | 's' | 'Hz' | 'bytes' | 'bytes/s' | 'probability';
  /** kind enum: the values accepted. */
  readonly values?: readonly string[];
  /** Filled in when the field is left out; no default and not required: the fault does without it. */
  readonly default?: number | string | boolean;
  readonly required?: boolean;
  readonly min?: number;
  readonly max?: number;
  /** Exclusive lower bound. */
  readonly above?: number;
  /** What a refusal says is accepted ("a number of milliseconds in 0..3600000"). */
  readonly expected?: string;
  /**
   * Spellings a config may use besides the key and its camelCase/snake_case twin: the reference
   * tools' (mcp-chaos-monkey's `delayMs` for `delay`).
   */
  readonly aliases?: readonly string[];
  readonly argument?: ArgumentDeclaration;
  /**
   * The `faultline proxy` flag, without dashes (`latency-deviation`); `faultline run` takes a
   * scenario fault's too, `faultline chaos inject` a connection fault's.
   */
  readonly flag?: string;
  /** Not a spec field: only an argument (bandwidth's `unit`, folded into bytesPerSecond). */
  readonly argumentOnly?: boolean;
  /**
   * HTTP faults: the `faultline chaos inject` flag, mcp-chaos-monkey's CLI spelling without dashes
   * (`status`; two faults may share one, as `delay`), and its default there when it has one.
   */
  readonly chaosFlag?: { readonly name: string; readonly default?: number };
  /** The Toxiproxy toxic's attribute giving this field (value × `scale`; Toxiproxy answers 0 when it is not sent). */
  readonly toxic?: { readonly attribute: string; readonly scale?: number };
  /**
   * The AWS FIS action parameter giving this field's argument (value ÷ `divisor`: `lossPercent` 7 is
   * a loss_rate of 0.07): the cloud rehearsal reads an FIS action's parameters into the scenario's
   * arguments by it.
   */
  readonly fis?: { readonly parameter: string; readonly divisor?: number };
}

/** The Toxiproxy toxic a network fault also is (src/toxiproxy/toxics.ts), its attributes on the fields. */
export interface ToxicDeclaration {
  readonly type: string;
  /** Fields Toxiproxy's meaning of the toxic fixes (its latency is uniform, on every chunk). */
  readonly fixed?: Readonly<Record<string, unknown>>;
  /** Attributes with which the toxic does nothing (Toxiproxy passes the stream on unchanged). */
  inert?(attributes: Readonly<Record<string, number>>): boolean;
}

export interface FaultDeclaration<Counters = unknown, Spec = never> {
  readonly type: string;
  readonly plane: 'network' | 'http';
  /** One line: what it does to the traffic. */
  readonly help: string;
  /** Network faults: the default direction when it is not ingress (a blackhole holds both ways). */
  readonly direction?: 'both';
  /** Its own fields (the common ones are NETWORK_COMMON_FIELDS / HTTP_COMMON_FIELDS). */
  readonly fields: readonly FieldDeclaration[];
  /** Network faults: the `faultline proxy` flag that switches it on, and its help. */
  readonly proxyFlag?: { readonly name: string; readonly help: string };
  /** The Toxiproxy toxic it also is. */
  readonly toxic?: ToxicDeclaration;
  /** How the commands spell it (`packet-loss`); default the type. */
  readonly command?: string;
  /** Whether it changed anything, from its counters: the one rule run records, verdicts and experiments use. */
  acted(counters: Counters): boolean;
  /** Network faults: what one of its `applications` is, singular, plural by an s ("delay", "held connection"). */
  readonly counts?: string;
  /** fault's report line for a validated spec (`scope`: the side/direction glyphs; HTTP faults: the probability). */
  describe?(spec: Spec, scope: string): string;
  /**
   * HTTP faults answering in the upstream's place: the status they answer with, so a verdict does
   * not blame the endpoint for those answers.
   */
  answers?(spec: Spec): number;
  /** Why settings that validate inject nothing (a latency of 0 ms), naming the scenario arguments; else undefined. */
  inert?(spec: Spec): string | undefined;
  /**
   * Network faults a scenario injects: what its scenario tool's proxy does, in the tool's
   * description (`fault_run_<type>_impact_scenario`).
   */
  readonly scenario?: string;
  /** Why else it may not act though traffic crosses it (no segment lost), naming the arguments to raise. */
  readonly idle?: string;
}

/** The bound on every delay a spec gives in milliseconds: up to an hour. */
export const MILLISECONDS = { min: 0, max: 3_600_000, expected: 'a number of milliseconds in 0..3600000' } as const;
export const PROBABILITY = { min: 0, max: 1, expected: 'a probability in 0..1' } as const;

/** Fields every network fault takes (read by SpecReader.target()). */
export const NETWORK_COMMON_FIELDS: readonly FieldDeclaration[] = [
  { key: 'name', kind: 'string', help: 'counter key, unique in one list (default the type)' },
  {
    key: 'side',
    kind: 'enum',
    values: ['server', 'client'],
    default: 'server',
    help: 'server (proxy↔target, the default) or client (client↔proxy)',
  },
  {
    key: 'direction',
    kind: 'enum',
    values: ['ingress', 'egress', 'both'],
    default: 'ingress',
    help: 'ingress (what the proxy reads on that side, the default), egress or both',
  },
];

/** Fields every HTTP fault takes (read by readCommon). */
export const HTTP_COMMON_FIELDS: readonly FieldDeclaration[] = [
  { key: 'name', kind: 'string', help: 'counter key, unique in one list (default the type)' },
  { key: 'target', kind: 'string', help: "a mapping's local port or #name (default every mapping)" },
  {
    key: 'probability',
    kind: 'number',
    unit: 'probability',
    ...PROBABILITY,
    default: 1,
    expected: 'a number in 0..1',
    help: 'chance 0..1 that a matching request gets the fault',
    chaosFlag: { name: 'probability' },
  },
  {
    key: 'method',
    kind: 'string',
    help: 'methods it applies to, e.g. "GET,POST" (default any)',
    chaosFlag: { name: 'method' },
  },
  {
    key: 'path',
    kind: 'string',
    help: 'path glob: * within a segment, ** across segments (default any)',
    chaosFlag: { name: 'path' },
  },
];

export const camelCase = (key: string): string => key.replace(/[_-](\w)/g, (_, c: string) => c.toUpperCase());
export const snakeCase = (key: string): string =>
  key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`).replace(/-/g, '_');

/** Every spelling a config may give a field in: the key, its camelCase and snake_case twins, the aliases. */
export function spellingsOf(field: FieldDeclaration): string[] {
  const names = [field.key, camelCase(field.key), snakeCase(field.key)];
  for (const alias of field.aliases ?? []) names.push(alias, camelCase(alias), snakeCase(alias));
  return [...new Set(names)];
}

/** fault's argument names for a fault's fields (the scenario tools', `faultline run`'s), in declaration order. */
export const argumentNames = (declaration: FaultDeclaration): string[] =>
  declaration.fields.flatMap((field) => (field.argument ? [field.argument.name] : []));

/** The command's spelling of a fault (`packet-loss`). */
export const commandOf = (declaration: FaultDeclaration): string =>
  declaration.command ?? declaration.type.replace(/_/g, '-');
