/**
 * A scratch copy of test/fixtures/index/tree for indexing tests, plus what git cannot hold in the
 * fixture (files its own .gitignore ignores, a node_modules directory, a file over 1 MB), and a
 * scratch data directory. `cleanup()` removes both.
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeConfig } from '../../src/config.js';
import type { IndexSettings } from '../../src/search/index.js';
import { fixturePath } from './repo.js';

/**
 * No LLM provider and no Qdrant: an index or search runs on the local store and embedder, whatever
 * the machine running the tests has set (a blank variable counts as unset).
 */
export const LOCAL_PROVIDERS = {
  OPENAI_API_KEY: '',
  OPENROUTER_API_KEY: '',
  GEMINI_API_KEY: '',
  ANTHROPIC_API_KEY: '',
  OLLAMA_HOST: '',
  QDRANT_URL: '',
} as const;

/** The fixture's sources in languages other than Python (see pythonScratchTree). */
export const NON_PYTHON_SOURCES = ['lib/server.go', 'web/build.kt', 'web/rateLimiter.ts'] as const;

export interface ScratchTree {
  dir: string;
  dataDir: string;
  settings: IndexSettings;
  write(path: string, text: string): void;
  remove(path: string): void;
  cleanup(): void;
}

export function scratchTree(env: NodeJS.ProcessEnv = {}): ScratchTree {
  const base = mkdtempSync(join(tmpdir(), 'faultline-index-'));
  const dir = join(base, 'tree');
  const dataDir = join(base, 'data');
  cpSync(fixturePath('index', 'tree'), dir, { recursive: true });
  const write = (path: string, text: string): void => {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  };
  write('ignored/secret.py', 'def ignored_directory_function():\n    return 1\n');
  write('app/skip.gen.py', 'def generated_and_ignored():\n    return 2\n');
  write('node_modules/dep/index.js', 'function dependencyCode() { return 42; }\n');
  write('app/huge.py', `# over the 1 MB limit\n${'x = 1\n'.repeat(200_000)}`);
  return {
    dir,
    dataDir,
    settings: { dataDir, llm: makeConfig().llm, env },
    write,
    remove: (path) => rmSync(join(dir, path)),
    cleanup: () => rmSync(base, { recursive: true, force: true }),
  };
}

/**
 * A scratch tree of the fixture's Python files only, for a test about how an index run starts, stops or waits:
 * each language's grammar costs a run ~0.3 s of CPU to load, and a Python-only index serves such a test as well.
 */
export function pythonScratchTree(): ScratchTree {
  const tree = scratchTree();
  for (const path of NON_PYTHON_SOURCES) tree.remove(path);
  return tree;
}
