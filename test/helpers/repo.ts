/** Paths for tests, which run compiled from dist/test. */
import { statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

/** The repository root (dist/test/helpers → three levels up). */
export const repoRoot: string = fileURLToPath(new URL('../../../', import.meta.url));

/** The built CLI entry point. */
export const cliPath: string = join(repoRoot, 'dist', 'src', 'cli.js');

export function fixturePath(...parts: string[]): string {
  return join(repoRoot, 'test', 'fixtures', ...parts);
}

/**
 * The test MCP server (helpers/mcp-target.ts) to start over stdio: `node <this> stdio`. It is the
 * one-file bundle `npm run build` writes of the compiled module (SDK included), which the suite
 * starts dozens of times: loading one file instead of the SDK's ~100 ES modules halves its start
 * (~0.6 → ~0.3 s of CPU). The compiled module itself when the bundle is missing or older.
 */
export const mcpTargetPath: string = (() => {
  const module = join(repoRoot, 'dist', 'test', 'helpers', 'mcp-target.js');
  const bundle = join(repoRoot, 'dist', 'test', 'helpers', 'mcp-target.bundle.mjs');
  try {
    return statSync(bundle).mtimeMs >= statSync(module).mtimeMs ? bundle : module;
  } catch {
    return module;
  }
})();
