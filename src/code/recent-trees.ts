/**
 * The syntax tree of the last version of a few documents (files, by path), so that the next
 * version is re-parsed incrementally: an agent lists a file, edits it, lists or extracts again,
 * and tree-sitter re-parses only the edited span, reusing the rest of the previous tree. Parsing
 * is most of a listing's cost (~26 of ~60 ms on a 3,000-line TypeScript file), and an incremental
 * re-parse after a small edit takes a few milliseconds.
 *
 * Trees live in the WASM heap, which never shrinks, so what is kept is bounded by entries and by
 * the characters of the sources kept: a tree takes roughly 30 bytes of heap per source character
 * (measured on TypeScript), so at most ~15 MB.
 * An evicted or replaced tree is deleted on the next turn of the event loop (deleteSoon).
 */
import type { Tree } from 'web-tree-sitter';

export interface KeptTree {
  /** The grammar the tree was parsed with (a grammar's own key: languages may share one). */
  grammarKey: string;
  source: string;
  tree: Tree;
}

/**
 * Deletes a tree once the current answer is on its way (the next turn of the event loop): freeing
 * a large tree takes a millisecond or two that a caller need not wait for. At most
 * MAX_DELETES_PENDING trees wait, so a loop that never yields frees them at once instead.
 */
export function deleteSoon(tree: Tree): void {
  if (pendingDeletes.length >= MAX_DELETES_PENDING) {
    tree.delete();
    return;
  }
  pendingDeletes.push(tree);
  if (pendingDeletes.length === 1)
    setImmediate(() => {
      for (const pending of pendingDeletes.splice(0)) pending.delete();
    });
}
const pendingDeletes: Tree[] = [];
const MAX_DELETES_PENDING = 4;

/*
 * An agent edits a file or two at a time. Eight documents and 1 M characters (~30 MiB of heap) kept three
 * jquery.js trees a server never re-parsed, 20 MB of its resident memory in an A/B run; the WebAssembly heap
 * never shrinks, so what the bound allows is what a long-lived server keeps.
 */
const MAX_DOCUMENTS = 4;
const MAX_SOURCE_CHARS = 512 * 1024;

export class RecentTrees {
  private readonly byDocument = new Map<string, KeptTree>();
  private chars = 0;

  constructor(
    private readonly maxDocuments = MAX_DOCUMENTS,
    private readonly maxChars = MAX_SOURCE_CHARS,
  ) {}

  /** Removes and returns the document's kept tree if it was parsed with this grammar; the caller then owns it. */
  take(document: string, grammarKey: string): KeptTree | undefined {
    const kept = this.byDocument.get(document);
    if (!kept) return undefined;
    this.forget(document, kept);
    if (kept.grammarKey === grammarKey) return kept;
    deleteSoon(kept.tree);
    return undefined;
  }

  /** Keeps `tree` as the document's latest version (owning it from now on), evicting the oldest beyond the limits. */
  keep(document: string, kept: KeptTree): void {
    const previous = this.byDocument.get(document);
    if (previous) {
      this.forget(document, previous);
      deleteSoon(previous.tree);
    }
    if (kept.source.length > this.maxChars) {
      deleteSoon(kept.tree);
      return;
    }
    this.byDocument.set(document, kept);
    this.chars += kept.source.length;
    for (const [oldest, entry] of this.byDocument) {
      if (this.byDocument.size <= this.maxDocuments && this.chars <= this.maxChars) break;
      this.forget(oldest, entry);
      deleteSoon(entry.tree);
    }
  }

  /** How many trees are kept (for tests). */
  get size(): number {
    return this.byDocument.size;
  }

  private forget(document: string, kept: KeptTree): void {
    this.byDocument.delete(document);
    this.chars -= kept.source.length;
  }
}
