/**
 * Finding the file a program name runs: as execvp does, a name without a slash is looked up on
 * PATH, a name with one is a path (relative to the working directory it starts in). The real path
 * is answered, so a symlink or a second spelling names the same program as the owner's allowance.
 */
import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, resolve } from 'node:path';

/** The real path of the executable `name` starts, or undefined when there is none. */
export function findExecutable(
  name: string,
  path: string | undefined = process.env.PATH,
  cwd: string = process.cwd(),
): string | undefined {
  if (name === '') return undefined;
  const candidates = name.includes('/')
    ? [isAbsolute(name) ? name : resolve(cwd, name)]
    : (path ?? '')
        .split(delimiter)
        .filter((dir) => dir !== '')
        .map((dir) => resolve(cwd, dir, name));
  for (const candidate of candidates) {
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return realpathSync(candidate);
    } catch {
      // Not there, or not executable by us: execvp would go on to the next directory too.
    }
  }
  return undefined;
}
