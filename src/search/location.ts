/**
 * Where the indexes of a data directory live, and which trees have one.
 *
 *   <dataDir>/index/<tree-key>/tree.json           {"tree": "/abs/path"} — what the key stands for
 *   <dataDir>/index/<tree-key>/<embedder>.index    the local store of that tree and embedder
 *
 * The tree key is the directory's name plus a hash of its real path, so two checkouts named the
 * same do not share an index, and the Qdrant collection of a tree uses the same key.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, realpath } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { writeFileAtomically } from './atomic-file.js';
import { slug } from './embedder.js';

export function indexDirectory(dataDir: string): string {
  return join(dataDir, 'index');
}

/** The real path of a tree (symlinks resolved), so every spelling of it finds the same index. */
export async function canonicalTree(tree: string): Promise<string> {
  return realpath(tree);
}

export function treeKey(canonical: string): string {
  const hash = createHash('sha256').update(canonical).digest('hex').slice(0, 12);
  return `${slug(basename(canonical)).slice(0, 40)}-${hash}`;
}

/** Records that `canonical` has an index under its key (once; the file never changes after). */
export async function registerTree(dataDir: string, canonical: string): Promise<string> {
  const dir = join(indexDirectory(dataDir), treeKey(canonical));
  await mkdir(dir, { recursive: true });
  const marker = join(dir, 'tree.json');
  if ((await readTreeMarker(marker)) !== canonical) {
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
