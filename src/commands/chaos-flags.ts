/**
 * `faultline chaos inject`'s fault flags, derived from the HTTP faults' declarations
 * (src/proxy/http/*.declaration.ts): each field's `chaosFlag`, mcp-chaos-monkey's CLI spelling
 * (`--status`, `--delay` shared by latency and timeout), and the common fields' (`--probability`,
 * `--method`, `--path`). The flags given become a fault config in mcp-chaos-monkey's spelling.
 * The connection faults' flags are `faultline proxy`'s (`--stall <ms>`, `--slicer-delay <us>`).
 */
import { Option, type Command } from 'commander';
import {
  camelCase,
  commandOf,
  HTTP_COMMON_FIELDS,
  spellingsOf,
  type FieldDeclaration,
} from '../proxy/faults/declaration.js';
import { CONNECTION_FAULTS } from '../proxy/faults/declarations.js';
import { HTTP_FAULTS } from '../proxy/http/declarations.js';
import { addFaultFlags, attributeOf, fieldFlags, fieldOption, flagHelp, placeholder } from './fault-flags.js';
import { integerIn, numberIn } from './parsers.js';
import { UsageError } from './run-command.js';

/** A field a flag sets: of one fault (its kebab-case type) or, undefined, of every HTTP fault. */
interface Use {
  fault: string | undefined;
  field: FieldDeclaration;
}

const kebab = (type: string): string => type.replace(/_/g, '-');

/** Each flag → the fields it sets: the faults' own in declaration order, then the common ones. */
const USES = new Map<string, Use[]>();
const use = (fault: string | undefined, field: FieldDeclaration): void => {
  if (field.chaosFlag) USES.set(field.chaosFlag.name, [...(USES.get(field.chaosFlag.name) ?? []), { fault, field }]);
};
for (const fault of HTTP_FAULTS)
  for (const field of fault.fields as readonly FieldDeclaration[]) use(kebab(fault.type), field);
for (const field of HTTP_COMMON_FIELDS) use(undefined, field);

/** The common fields' flags: HTTP faults only (a network fault acts on all the traffic of its target). */
export const HTTP_ONLY_FLAGS: readonly string[] = HTTP_COMMON_FIELDS.flatMap((field) =>
  field.chaosFlag ? [field.chaosFlag.name] : [],
).sort();

function helpOf(uses: readonly Use[]): string {
  const { field } = uses[0]!;
  // mcp-chaos-monkey's default, where it has one, replaces the one the field's help names.
  const fallback = field.chaosFlag?.default ?? field.default;
  const what = uses.map(({ fault, field }) => {
    const help = fallback === undefined ? field.help : field.help.replace(/ \(default[^)]*\)$/, '');
    return `${fault ? `${fault}: ` : ''}${help}`;
  });
  return flagHelp(field, what.join('; '), fallback);
}

function optionOf(name: string, uses: readonly Use[]): Option {
  const { field } = uses[0]!;
  const [min, max] = [field.min ?? 0, field.max ?? Number.MAX_SAFE_INTEGER];
  const parse =
    field.kind === 'integer' ? integerIn(min, max) : field.kind === 'number' ? numberIn(min, max) : undefined;
  return fieldOption(name, field, helpOf(uses), parse);
}

/** Adds every derived flag. */
export function addChaosFlags(command: Command): Command {
  for (const [name, uses] of USES) command.addOption(optionOf(name, uses));
  return addFaultFlags(command, 'proxy', CONNECTION_FAULTS);
}

/**
 * The fields the connection faults' flags give the fault `type` (kebab-case), by spec key; a flag of
 * another fault (of any, for an HTTP fault) is a mistake, not something to drop.
 */
export function connectionConfig(type: string, options: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  for (const { fault, field, shown } of fieldFlags('proxy', CONNECTION_FAULTS)) {
    const value = options[attributeOf(shown)];
    if (value === undefined) continue;
    if (commandOf(fault) !== type)
      throw new UsageError(`--${shown}: applies to ${commandOf(fault)} faults, not ${type}`);
    config[field.key] = value;
  }
  return config;
}

/** mcp-chaos-monkey's spelling of a field (its alias, `delayMs`, else camelCase, `statusCode`). */
const spelling = (field: FieldDeclaration): string => field.aliases?.[0] ?? camelCase(field.key);

/**
 * The config fields the flags give an HTTP fault `type` (kebab-case), with mcp-chaos-monkey's
 * defaults for those `given` (the --config JSON) does not set in any spelling.
 */
export function chaosConfig(
  type: string,
  options: Readonly<Record<string, unknown>>,
  given: Readonly<Record<string, unknown>> = {},
): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  for (const [name, uses] of USES) {
    for (const { fault, field } of uses) {
      if (fault !== undefined && fault !== type) continue;
      const inGiven = spellingsOf(field).some((key) => key in given);
      let value = options[attributeOf(name)] ?? (inGiven ? undefined : field.chaosFlag?.default);
      if (field.kind === 'strings' && typeof value === 'string') {
        const items = value.split(',').map((item) => item.trim());
        value = items.some(Boolean) ? items.filter(Boolean) : undefined;
      }
      if (value !== undefined) config[spelling(field)] = value;
      else if (field.required && !inGiven)
        throw new UsageError(`${type} needs --${name} ${placeholder(field).replace(/[<>]/g, '')}`);
    }
  }
  return config;
}
