/**
 * How an exporter names what it refuses: the argument as the caller spells it (the tools'
 * `fault_start`, the CLI's `--fault-start`), and one message shape for every engine.
 */
import { InputError, type Spell } from '../kernel/errors.js';

export { asGiven, type Spell } from '../kernel/errors.js';

/** `<argument>: cannot export to <engine>: <reason>`, the argument spelled as the caller wrote it. */
export function refuse(spell: Spell, argument: string, to: string, reason: string): never {
  throw new InputError(`${spell(argument)}: cannot export to ${to}: ${reason}`);
}
