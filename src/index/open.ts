/**
 * Which store an index uses: Qdrant when QDRANT_URL is set, else the local store under the data
 * directory; either way one per tree and embedder.
 */
import { join } from 'node:path';
import type { Config, LlmConfig } from '../config.js';
import { IndexError } from './errors.js';
import type { Embedder } from './embedder.js';
import { LocalStore } from './local-store.js';
import { indexDirectory, treeKey } from './location.js';
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

export function qdrantSettings(env: NodeJS.ProcessEnv): QdrantSettings | undefined {
  const url = env.QDRANT_URL?.trim();
  if (!url) return undefined;
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
}

export async function openStore(settings: IndexSettings, canonicalTree: string, embedder: Embedder): Promise<OpenedStore> {
  const qdrant = qdrantSettings(settings.env);
  const key = treeKey(canonicalTree);
  if (qdrant) {
    // The Qdrant client (~80 ms to load) is loaded only when Qdrant is in use.
    const { QdrantStore } = await import('./qdrant-store.js');
    const store = new QdrantStore(qdrant, `faultline-${key}-${embedder.id}`.slice(0, 255));
    return { store, exists: await store.exists() };
  }
  const file = join(indexDirectory(settings.dataDir), key, `${embedder.id}.index`);
  const exists = await LocalStore.exists(file);
  return { store: await LocalStore.open(file, { tree: canonicalTree, embedder: embedder.id }), exists };
}
