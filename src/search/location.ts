/**
 * Where the indexes of a data directory live, and which trees have one.
 *
 *   <dataDir>/index/<tree-key>/tree.json           {"tree": "/abs/path"} — what the key stands for
 *   <dataDir>/index/<tree-key>/<embedder>.index    the local store of that tree and embedder
 *
 * The tree key is the directory's name plus a hash of its real path, so two checkouts named the
 * same do not share an index, and the Qdrant collection of a tree uses the same key.
 */
import { mkdir, readdir, readFile, realpath } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { slug } from './embedder.js';
import { createSha256 } from '../kernel/sha256.js';

export function indexDirectory(dataDir: string): string {
  return join(dataDir, 'index');
}

/** The real path of a tree (symlinks resolved), so every spelling of it finds the same index. */
export async function canonicalTree(tree: string): Promise<string> {
  return realpath(tree);
}

/** The hex digits of the path's sha256 in a tree key. */
const KEY_HASH_CHARS = 12;

export function treeKey(canonical: string): string {
  const hash = createSha256().update(canonical).digest('hex').slice(0, KEY_HASH_CHARS);
  return `${slug(basename(canonical)).slice(0, 40)}-${hash}`;
}

/**
 * The key of `canonical`'s index as its marker records it, else treeKey's: the directory whose
 * name has the tree's name and a hash's length and whose marker names the tree (registerTree
 * writes it there), found with one listing and a small read and without hashing.
 */
export async function storedTreeKey(dataDir: string, canonical: string): Promise<string> {
  const prefix = `${slug(basename(canonical)).slice(0, 40)}-`;
  let keys: string[];
  try {
    keys = await readdir(indexDirectory(dataDir));
  } catch {
    keys = [];
  }
  for (const key of keys.sort()) {
    if (key.length !== prefix.length + KEY_HASH_CHARS || !key.startsWith(prefix)) continue;
    if ((await readTreeMarker(join(indexDirectory(dataDir), key, 'tree.json'))) === canonical) return key;
  }
  return treeKey(canonical);
}

/** Records that `canonical` has an index under its key (once; the file never changes after). */
export async function registerTree(dataDir: string, canonical: string): Promise<string> {
  const dir = join(indexDirectory(dataDir), treeKey(canonical));
  await mkdir(dir, { recursive: true });
  const marker = join(dir, 'tree.json');
  if ((await readTreeMarker(marker)) !== canonical) {
    // Writing is for indexing only: a search loads neither this module nor node:crypto's randomBytes.
    const { writeFileAtomically } = await import('./atomic-file.js');
    await writeFileAtomically(marker, [Buffer.from(`${JSON.stringify({ tree: canonical })}\n`)]);
  }
  return dir;
}

/** Every tree that was ever indexed under this data directory (absent trees included). */
export async function indexedTrees(dataDir: string): Promise<string[]> {
  let keys: string[];
  try {
    keys = await readdir(indexDirectory(dataDir));
  } catch {
    return [];
  }
  const trees: string[] = [];
  for (const key of keys.sort()) {
    const tree = await readTreeMarker(join(indexDirectory(dataDir), key, 'tree.json'));
    if (tree !== undefined) trees.push(tree);
  }
  return trees;
}

async function readTreeMarker(path: string): Promise<string | undefined> {
  try {
    const parsed = JSON.parse(await readFile(path, 'utf8')) as { tree?: unknown };
    return typeof parsed.tree === 'string' ? parsed.tree : undefined;
  } catch {
    return undefined;
  }
}
