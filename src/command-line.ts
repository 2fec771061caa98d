/**
 * The limits a command line must fit before a child process can be spawned from it, checked up
 * front so that a command or argument an agent sends is refused naming it (`args[2]: …`) rather
 * than failing inside spawn with a bare `spawn E2BIG` or `ENAMETOOLONG`.
 *
 * The kernel's own limits (Linux; other systems are roomier or alike): a path of at most 4095
 * bytes with components of at most 255; each argument at most 128 KiB (MAX_ARG_STRLEN, with its
 * NUL); arguments and environment together at most ARG_MAX, 2 MiB by default. No string may hold a
 * NUL byte (Node refuses it).
 */
import { InputError } from './kernel/errors.js';

export const COMMAND_LINE_LIMITS = {
  pathBytes: 4095,
  nameBytes: 255,
  argBytes: 128 * 1024 - 1,
  args: 10_000,
  /** Arguments and environment together, with room for the pointers to them. */
  totalBytes: 2 * 1024 * 1024 - 64 * 1024,
} as const;

/** The names the refusals use for the command and its arguments. */
export interface CommandLineNames {
  command: string;
  args: string;
}

/**
 * Throws an InputError naming the part of the command line that cannot be spawned (too long, a
 * NUL byte, too many arguments, arguments and environment over ARG_MAX); returns otherwise.
 */
export function checkCommandLine(
  command: string,
  args: readonly string[],
  names: CommandLineNames = { command: 'command', args: 'args' },
  env: NodeJS.ProcessEnv = process.env,
): void {
  const L = COMMAND_LINE_LIMITS;
  if (command.trim() === '') throw new InputError(`${names.command}: must not be empty`);
  if (command.includes('\0')) throw new InputError(`${names.command}: must not contain a NUL byte`);
  const commandBytes = Buffer.byteLength(command);
  if (commandBytes > L.pathBytes)
    throw new InputError(`${names.command}: ${commandBytes} bytes; a command path is at most ${L.pathBytes}`);
  const longest = command.split('/').reduce((most, part) => Math.max(most, Buffer.byteLength(part)), 0);
  if (longest > L.nameBytes)
    throw new InputError(`${names.command}: a path component of ${longest} bytes; at most ${L.nameBytes}`);
  if (args.length > L.args) throw new InputError(`${names.args}: ${args.length} arguments; at most ${L.args}`);
  let total = commandBytes + 1;
  for (const [index, arg] of args.entries()) {
    if (arg.includes('\0')) throw new InputError(`${names.args}[${index}]: must not contain a NUL byte`);
    const bytes = Buffer.byteLength(arg);
    if (bytes > L.argBytes)
      throw new InputError(`${names.args}[${index}]: ${bytes} bytes; one argument is at most ${L.argBytes}`);
    total += bytes + 1 + 8;
  }
  const envBytes = Object.entries(env).reduce(
    (sum, [key, value]) => sum + (value === undefined ? 0 : Buffer.byteLength(key) + Buffer.byteLength(value) + 2 + 8),
    0,
  );
  if (total + envBytes > L.totalBytes) {
    throw new InputError(
      `${names.args}: ${total} bytes of arguments with ${envBytes} of ` +
        `environment; together at most ${L.totalBytes} (the system's ` +
        `ARG_MAX)`,
    );
  }
}
