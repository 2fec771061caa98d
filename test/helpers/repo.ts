/** Paths for tests, which run compiled from dist/test. */
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

/** The repository root (dist/test/helpers → three levels up). */
export const repoRoot: string = fileURLToPath(new URL('../../../', import.meta.url));

/** The built CLI entry point. */
export const cliPath: string = join(repoRoot, 'dist', 'src', 'cli.js');

export function fixturePath(...parts: string[]): string {
  return join(repoRoot, 'test', 'fixtures', ...parts);
}
