/**
 * The network faults' flags of `faultline run` (and `export`) and `faultline proxy`, derived from
 * the faults' declarations (src/proxy/faults/*.declaration.ts). Each field of a scenario's fault has
 * two spellings, and both commands take both: fault's argument with dashes (`--deviation`, what
 * `run` shows) and the proxy's namespaced flag (`--latency-deviation`, what `proxy` shows); the
 * other is a hidden alias. The connection faults (`--stall`, `--slicer` …) have only the proxy's,
 * on `faultline proxy` and `faultline chaos inject`.
 *
 * Only leaf modules are imported: `faultline export` loads this before it knows it will run.
 */
import { Option, type Command } from 'commander';
import { anyCaseChoice, integer, nonNegativeNumber, number } from './parsers.js';
import { commandOf, type FaultDeclaration, type FieldDeclaration } from '../proxy/faults/declaration.js';
import { LIST_FAULTS, NETWORK_FAULTS } from '../proxy/faults/declarations.js';
import { HTTP_FAULTS } from '../proxy/http/declarations.js';
import { UsageError } from './run-command.js';

export type FlagDoor = 'run' | 'proxy';

/** One field's flags: the one a door shows and the alias it hides (undefined when both are the same). */
export interface FieldFlags {
  fault: FaultDeclaration;
  field: FieldDeclaration;
  shown: string;
  hidden: string | undefined;
}

const dashed = (name: string): string => name.replace(/_/g, '-');
/** commander's attribute for a flag name (`latency-deviation` → latencyDeviation). */
export const attributeOf = (flag: string): string => flag.replace(/-(\w)/g, (_, c: string) => c.toUpperCase());

/** The faults whose flags a door takes: `run` a scenario's faults, `proxy` every fault a list takes. */
export const faultsOf = (door: FlagDoor): readonly FaultDeclaration[] =>
  door === 'run' ? NETWORK_FAULTS : LIST_FAULTS;

/** The flags of every declared field that has an argument or a flag, in declaration order. */
export function fieldFlags(door: FlagDoor, faults: readonly FaultDeclaration[] = faultsOf(door)): FieldFlags[] {
  const flags: FieldFlags[] = [];
  for (const fault of faults) {
    for (const field of fault.fields) {
      const run = field.argument ? dashed(field.argument.name) : field.flag;
      const proxy = field.flag ?? run;
      if (run === undefined || proxy === undefined) continue;
      const [shown, other] = door === 'run' ? [run, proxy] : [proxy, run];
      flags.push({ fault, field, shown, hidden: other === shown ? undefined : other });
    }
  }
  return flags;
}

const PLACEHOLDERS: Readonly<Record<string, string>> = {
  ms: '<ms>',
  µs: '<us>',
  s: '<seconds>',
  Hz: '<hz>',
  bytes: '<bytes>',
  probability: '<fraction>',
};

/** A fault flag's value placeholder: one rule for every door (`proxy`, `run`, `chaos inject`). */
export function placeholder(field: FieldDeclaration): string {
  if (field.kind === 'strings') return '<a,b>';
  if (field.argument?.unitArgument) return '<rate>';
  const byUnit = field.unit === undefined ? undefined : PLACEHOLDERS[field.unit];
  if (byUnit) return byUnit;
  // A word or a name: what its key ends with says what it is (error_body's <body>, bandwidth's scope <scope>).
  if (field.kind === 'enum' || field.kind === 'string') return `<${dashed(field.key).split('-').at(-1)}>`;
  return '<n>';
}

/** A fault flag's help: what it sets (`what`), an enum's values, the unit and the default the door applies. */
export function flagHelp(
  field: FieldDeclaration,
  what: string,
  fallback: unknown = field.argument?.default ?? field.default,
): string {
  const values = field.kind === 'enum' ? `: ${(field.values ?? []).join(', ')}` : '';
  const unit = field.unit && field.unit !== 'probability' ? `, ${field.unit}` : '';
  return `${what}${values}${unit}${fallback === undefined ? '' : ` (default ${fallback})`}`;
}

/** A fault flag: a switch for a boolean field, else a value read by `parse` (an enum's: its values, any case). */
export function fieldOption(
  flag: string,
  field: FieldDeclaration,
  help: string,
  parse?: (text: string) => unknown,
): Option {
  if (field.kind === 'boolean') return new Option(`--${flag}`, help);
  const option = new Option(`--${flag} ${placeholder(field)}`, help);
  const parser = field.kind === 'enum' ? anyCaseChoice(field.values ?? []) : parse;
  return parser ? option.argParser(parser) : option;
}

const isNumeric = (field: FieldDeclaration): boolean => field.kind === 'number' || field.kind === 'integer';

function helpOf(door: FlagDoor, { fault, field }: FieldFlags): string {
  const isSwitch = door === 'proxy' && fault.proxyFlag?.name === field.flag;
  if (isSwitch) return fault.proxyFlag!.help;
  return flagHelp(field, door === 'run' ? `${commandOf(fault)}: ${field.help}` : field.help);
}

/** `run` leaves ranges to the scenario (its errors name the argument); `proxy` refuses a negative number here. */
function optionFor(door: FlagDoor, flag: string, field: FieldDeclaration, help: string): Option {
  return fieldOption(flag, field, help, isNumeric(field) ? (door === 'run' ? number : nonNegativeNumber) : undefined);
}

/**
 * Adds the declared fault fields' flags (shown and hidden alias) of `faults`, and `proxy`'s switches
 * of field-less faults.
 */
export function addFaultFlags(command: Command, door: FlagDoor, faults = faultsOf(door)): Command {
  for (const fault of faults) {
    for (const flags of fieldFlags(door, [fault])) {
      command.addOption(optionFor(door, flags.shown, flags.field, helpOf(door, flags)));
      if (flags.hidden) command.addOption(optionFor(door, flags.hidden, flags.field, helpOf(door, flags)).hideHelp());
    }
    const on = fault.proxyFlag;
    if (door === 'proxy' && on && !fault.fields.some((field) => field.flag === on.name))
      command.addOption(new Option(`--${on.name}`, on.help));
  }
  return command;
}

/** The value a field's flags were given (either spelling), or undefined; both spellings at once is a mistake. */
export function flagValue(options: Record<string, unknown>, flags: FieldFlags): unknown {
  const shown = options[attributeOf(flags.shown)];
  const hidden = flags.hidden === undefined ? undefined : options[attributeOf(flags.hidden)];
  if (shown !== undefined && hidden !== undefined)
    throw new UsageError(`--${flags.shown} and --${flags.hidden} are the same flag; give one`);
  return shown ?? hidden;
}

/** Each fault's own flag attributes, both spellings (`refuseOtherFaultFlags` refuses another fault's). */
export function flagsByFault(door: FlagDoor): Map<string, FieldFlags[]> {
  const byFault = new Map<string, FieldFlags[]>();
  for (const fault of faultsOf(door)) byFault.set(fault.type, []);
  for (const flags of fieldFlags(door)) byFault.get(flags.fault.type)!.push(flags);
  return byFault;
}

/** `run http-error`'s flags for each HTTP fault's arguments (`--status-code`, `--missing-fields a,b`), from the
 * declarations. */
export function addHttpArgumentFlags(command: Command): Command {
  for (const fault of HTTP_FAULTS) {
    for (const field of fault.fields as readonly FieldDeclaration[]) {
      const argument = field.argument;
      if (!argument) continue;
      const help = flagHelp(field, `http-error ${fault.type}: ${field.help}`);
      command.addOption(
        fieldOption(
          dashed(argument.name),
          field,
          help,
          field.kind === 'integer' ? integer : isNumeric(field) ? number : undefined,
        ),
      );
    }
  }
  return command;
}

/** The HTTP fault argument flags given, as the HTTP scenario's arguments (a list flag split at commas). */
export function httpArgumentsOf(options: Record<string, unknown>): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const field of HTTP_FAULTS.flatMap((fault) => fault.fields as readonly FieldDeclaration[])) {
    if (!field.argument) continue;
    const value = options[attributeOf(dashed(field.argument.name))];
    if (value === undefined) continue;
    args[field.argument.name] =
      field.kind === 'strings' && typeof value === 'string'
        ? value
            .split(',')
            .map((item) => item.trim())
            .filter(Boolean)
        : value;
  }
  return args;
}

/** Option keys of every HTTP fault argument flag (`statusCode` …). */
export const HTTP_ARGUMENT_FLAGS: readonly string[] = HTTP_FAULTS.flatMap(
  (fault) => fault.fields as readonly FieldDeclaration[],
).flatMap((field) => (field.argument ? [attributeOf(dashed(field.argument.name))] : []));
