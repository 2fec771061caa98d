/**
 * The owner's allowance as `faultline mcp` reads it at start: --allow-commands (any program),
 * --allow-command PROG (repeatable) and FAULTLINE_ALLOW_COMMANDS (a comma-separated list of
 * programs, or `*` for any). Every name is resolved to the real path of its executable now, so
 * what the owner allowed is a file, not a name a later PATH could point elsewhere.
 */
import type { CommandAllowance } from '../config.js';
import { findExecutable } from './executable.js';

export const ALLOW_COMMANDS_ENV = 'FAULTLINE_ALLOW_COMMANDS';

/** Throws an Error naming the flag (or variable) and the program that cannot be found. */
export function commandAllowance(
  flags: { allowCommands?: boolean | undefined; allowCommand?: readonly string[] | undefined },
  env: NodeJS.ProcessEnv = process.env,
): CommandAllowance {
  const listed = (env[ALLOW_COMMANDS_ENV] ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const allowAll = flags.allowCommands === true || listed.includes('*');
  const programs: string[] = [];
  const named = [
    ...(flags.allowCommand ?? []).map((name) => ({ name, from: `--allow-command ${name}` })),
    ...listed.filter((name) => name !== '*').map((name) => ({ name, from: `${ALLOW_COMMANDS_ENV}=${name}` })),
  ];
  for (const { name, from } of named) {
    const file = findExecutable(name, env.PATH);
    if (file === undefined) throw new Error(`${from}: no executable ${JSON.stringify(name)} found (on PATH)`);
    if (!programs.includes(file)) programs.push(file);
  }
  return { allowAll, programs };
}
