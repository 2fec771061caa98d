/**
 * Which store an index uses: Qdrant when QDRANT_URL is set, else the local SQLite store under the
 * data directory (`<dataDir>/index/<tree-key>/<embedder>.sqlite`); either way one per tree and
 * embedder.
 */
import { readdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Config, LlmConfig } from '../config.js';
import { IndexError } from './errors.js';
import type { Embedder } from './embedder.js';
import { removeLegacyIndex, SqliteStore } from './sqlite-store.js';
import { HashedEmbedder } from './hashed-embedder.js';
import { indexDirectory, storedTreeKey, treeKey } from './location.js';
import type { QdrantSettings } from './qdrant-store.js';
import type { VectorStore } from './store.js';

export interface IndexSettings {
  /** The local stores live under `<dataDir>/index`. */
  dataDir: string;
  /** Which embedding provider, if any (src/llm decides from this and the API keys in `env`). */
  llm: LlmConfig;
  /** API keys, QDRANT_URL, QDRANT_API_KEY. */
  env: NodeJS.ProcessEnv;
}

export function indexSettingsFrom(config: Config, env: NodeJS.ProcessEnv = process.env): IndexSettings {
  return { dataDir: config.dataDir, llm: config.llm, env };
}

/** Whether QDRANT_URL asks for Qdrant (qdrantSettings checks the URL). */
export function wantsQdrant(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.QDRANT_URL?.trim());
}

export function qdrantSettings(env: NodeJS.ProcessEnv): QdrantSettings | undefined {
  if (!wantsQdrant(env)) return undefined;
  const url = env.QDRANT_URL!.trim();
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new IndexError(`QDRANT_URL must be an http:// or https:// URL of Qdrant's REST API (got "${url}")`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new IndexError(`QDRANT_URL must be an http:// or https:// URL of Qdrant's REST API (got "${url}")`);
  }
  return { url: url.replace(/\/+$/, ''), apiKey: env.QDRANT_API_KEY?.trim() || undefined };
}

export interface OpenedStore {
  store: VectorStore;
  /** Whether an index of this tree and embedder exists already. */
  exists: boolean;
  /** Whether an index in the format before SQLite was found (removed by indexing, to be rebuilt). */
  legacy?: boolean;
  /**
   * A local database with no committed index in it: the first index run of this tree was
   * interrupted (Ctrl-C, a kill, a failure) before it committed, or is still running. Search says
   * so rather than "not indexed", which would leave the user wondering what happened to the run.
   */
  unfinished?: boolean;
}

/** `signal`: an indexing run's, so that waiting for another run's write lock stops when it is cancelled. */
export async function openStore(
  settings: IndexSettings,
  canonicalTree: string,
  embedder: Embedder,
  signal?: AbortSignal,
  onWaiting?: (file: string) => void,
): Promise<OpenedStore> {
  const qdrant = qdrantSettings(settings.env);
  if (qdrant) {
    const key = treeKey(canonicalTree);
    // The Qdrant client (~80 ms to load) is loaded only when Qdrant is in use.
    const { QdrantStore } = await import('./qdrant-store.js');
    const store = new QdrantStore(qdrant, `faultline-${key}-${embedder.id}`.slice(0, 255), basename(canonicalTree));
    return { store, exists: await store.exists() };
  }
  const base = join(
    indexDirectory(settings.dataDir),
    await storedTreeKey(settings.dataDir, canonicalTree),
    embedder.id,
  );
  const file = `${base}.sqlite`;
  const exists = SqliteStore.exists(file);
  const legacy = !exists && SqliteStore.exists(`${base}.index`);
  // The local hashed embedder's vectors add nothing the lexical and symbol channels lack.
  const vectors = !(embedder instanceof HashedEmbedder);
  const store = await SqliteStore.open(
    file,
    { tree: canonicalTree, embedder: embedder.id, vectors },
    signal,
    onWaiting,
  );
  // A first run that was cancelled (or has not committed yet) leaves a database with no index in it.
  const committed = exists && store.committed();
  return { store, exists: committed, legacy, unfinished: exists && !committed };
}

/**
 * Removes the index of `canonicalTree` in the format before SQLite (one file per tree and
 * embedder, `<embedder>.index`), which this version no longer reads; true when there was one.
 */
export function removeLegacyLocalIndex(settings: IndexSettings, canonicalTree: string, embedder: Embedder): boolean {
  if (qdrantSettings(settings.env)) return false;
  return removeLegacyIndex(join(indexDirectory(settings.dataDir), treeKey(canonicalTree), `${embedder.id}.index`));
}

/**
 * The local index directories (`<dataDir>/index/<tree-key>`) holding a database of this embedder
 * that no run ever committed: a tree is registered (tree.json) just before its first commit, so a
 * database without the marker is a first run that was interrupted or is still running.
 */
export async function unfinishedLocalIndexes(settings: IndexSettings, embedder: Embedder): Promise<string[]> {
  if (qdrantSettings(settings.env)) return [];
  const root = indexDirectory(settings.dataDir);
  let keys: string[];
  try {
    keys = await readdir(root);
  } catch {
    return [];
  }
  return keys
    .sort()
    .map((key) => join(root, key))
    .filter(
      (dir) => SqliteStore.exists(join(dir, `${embedder.id}.sqlite`)) && !SqliteStore.exists(join(dir, 'tree.json')),
    );
}
