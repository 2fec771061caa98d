/**
 * Cuts a source file into chunks for a code index: pieces an embedding model can take whole and
 * a search result can show, each with the symbol and lines it covers.
 *
 * With a grammar (one parse, the same definitions listDefinitions finds):
 * - a function, method or constructor is one chunk, its full text (decorators, doc comments,
 *   export); one over `maxChars` is split between the statements of its body into `name#part1`,
 *   `name#part2`, … (the first part keeps the signature);
 * - a class, interface, struct, enum, trait or module is one "skeleton" chunk: its text with the
 *   bodies of the functions inside it collapsed to `{ … }` (Python: `...`), since each of those
 *   functions has its own chunk;
 * - the lines no definition covers (imports, constants, top-level statements) form `<module>`
 *   chunks, one per run of such lines between definitions (`<module>#partN` when there are
 *   several), each exactly the lines it names.
 * Without a grammar: windows of WINDOW_LINES lines overlapping by WINDOW_OVERLAP.
 *
 * Lines are 1-based and inclusive; `hash` is the SHA-256 of the chunk text, so an unchanged chunk
 * has the same hash on every run.
 */
import { createHash } from 'node:crypto';
import type { Node, Tree } from 'web-tree-sitter';
import { findDefinitions, isFunctionKind, type Definition, type DefinitionKind } from './definitions.js';
import { withTree } from './grammar.js';
import type { LanguageInfo } from './languages.js';

/** About 500 tokens: within every embedding model's input limit, and readable in a result. */
export const MAX_CHUNK_CHARS = 2000;
export const WINDOW_LINES = 40;
export const WINDOW_OVERLAP = 15;

/** A definition's kind, `toplevel` for a `<module>` chunk, `window` for a line window. */
export type ChunkKind = DefinitionKind | 'toplevel' | 'window';

export interface CodeChunk {
  /** The path the caller gave (the indexer passes tree-relative POSIX paths). */
  path: string;
  language: string;
  /** Qualified name (`Greeter.hello`, `Type::method`), with `#partN` for split definitions; `<module>`; `<lines a-b>`.
   * */
  symbol: string;
  kind: ChunkKind;
  startLine: number;
  endLine: number;
  text: string;
  /** SHA-256 of `text`, hex. */
  hash: string;
}

export interface ChunkOptions {
  path: string;
  /** The grammar, or the name of a language that has none (chunked in line windows). */
  language: LanguageInfo | string;
  maxChars?: number;
}

type Piece = Omit<CodeChunk, 'path' | 'language' | 'hash'>;

export async function chunkSource(source: string, options: ChunkOptions): Promise<CodeChunk[]> {
  const maxChars = options.maxChars ?? MAX_CHUNK_CHARS;
  const lines = new Lines(source);
  const { language } = options;
  let pieces: Piece[];
  if (typeof language === 'string') {
    pieces = windowPieces(lines, maxChars);
  } else {
    pieces = await withTree(source, language, (tree, grammar) => {
      const definitions = findDefinitions(tree, grammar, language, source);
      return [
        ...definitions.flatMap((definition) =>
          isFunctionKind(definition.kind)
            ? functionPieces(definition, tree, lines, maxChars)
            : skeletonPieces(definition, definitions, lines, maxChars),
        ),
        ...toplevelPieces(definitions, lines, maxChars),
      ];
    });
  }
  const languageName = typeof language === 'string' ? language : language.name;
  return pieces
    .filter((piece) => piece.text.trim() !== '')
    .map((piece) => ({
      path: options.path,
      language: languageName,
      ...piece,
      hash: createHash('sha256').update(piece.text).digest('hex'),
    }));
}

/** The whole definition, or parts cut between the statements of its body. */
function functionPieces(definition: Definition, tree: Tree, lines: Lines, maxChars: number): Piece[] {
  const text = lines.source.slice(definition.startOffset, definition.endOffset);
  const { qualifiedName: symbol, kind, startLine, endLine } = definition;
  if (text.length <= maxChars) return [{ symbol, kind, startLine, endLine, text }];

  // Segments start at the definition and at every statement of the body after its first line.
  const cuts = statementLines(definition, tree, lines.source).filter((line) => line > startLine && line <= endLine);
  const bounds = [startLine, ...new Set(cuts), endLine + 1];
  const segments: Array<[number, number]> = [];
  for (let i = 0; i + 1 < bounds.length; i++) {
    // A segment ends at its last line with text: blank lines before the next statement belong to no part.
    let last = bounds[i + 1]! - 1;
    while (last > bounds[i]! && lines.isBlank(last)) last--;
    segments.push([bounds[i]!, last]);
  }

  const ranges: Array<[number, number]> = [];
  let current: [number, number] | undefined;
  for (const segment of segments) {
    if (current && lines.length(current[0], segment[1]) <= maxChars) {
      current[1] = segment[1];
      continue;
    }
    if (current) ranges.push(current);
    current = [...segment];
  }
  if (current) ranges.push(current);

  // A single statement over the budget (a long `if` or literal) is cut between lines.
  const parts = ranges.flatMap(([from, to]) =>
    lines.length(from, to) <= maxChars
      ? [[from, to] as [number, number]]
      : packLines(lines.entries(from, to), maxChars).map(rangeOf),
  );
  return parts.map(([from, to], index) => ({
    symbol: `${symbol}#part${index + 1}`,
    kind,
    startLine: from,
    endLine: to,
    text: lines.text(from, to),
  }));
}

/** 1-based first lines of the statements directly in the definition's body. */
function statementLines(definition: Definition, tree: Tree, source: string): number[] {
  const body = definition.body;
  if (!body) return [];
  // The body span may start at its line's start (for indentation); the node starts at its first token.
  let first = body.startOffset;
  while (first < body.endOffset && /\s/.test(source[first]!)) first++;
  let node: Node | null = tree.rootNode.descendantForIndex(first);
  while (node && node.endIndex < body.endOffset) node = node.parent;
  if (!node) return [];
  return node.namedChildren.flatMap((child) => (child ? [child.startPosition.row + 1] : []));
}

/** A type's text with the bodies of the functions inside it collapsed. */
function skeletonPieces(definition: Definition, all: readonly Definition[], lines: Lines, maxChars: number): Piece[] {
  const source = lines.source;
  const inner = all.filter(
    (other) =>
      other !== definition &&
      isFunctionKind(other.kind) &&
      other.body !== null &&
      other.startOffset >= definition.startOffset &&
      other.endOffset <= definition.endOffset,
  );
  // The skeleton by lines, each with the source lines it stands for: a line with a collapsed body
  // joins the body's first and last lines, so every part of a split skeleton can say its lines.
  const skeleton: Array<{ text: string; from: number; to: number }> = [];
  let line = { text: '', from: lines.lineAt(definition.startOffset), to: lines.lineAt(definition.startOffset) };
  const copy = (start: number, end: number): void => {
    for (let at = start; ; ) {
      const newline = source.indexOf('\n', at);
      if (newline === -1 || newline >= end) {
        line.text += source.slice(at, end);
        if (end > at) line.to = lines.lineAt(end - 1);
        return;
      }
      line.text += source.slice(at, newline);
      skeleton.push(line);
      at = newline + 1;
      line = { text: '', from: lines.lineAt(at), to: lines.lineAt(at) };
    }
  };
  let at = definition.startOffset;
  for (const member of inner) {
    const body = member.body!;
    // Bodies of functions nested in an already collapsed one are gone with it.
    if (body.startOffset < at) continue;
    copy(at, body.startOffset);
    line.text += collapsed(source.slice(body.startOffset, body.endOffset));
    line.to = lines.lineAt(Math.max(body.startOffset, body.endOffset - 1));
    at = body.endOffset;
  }
  copy(at, definition.endOffset);
  skeleton.push(line);
  const text = skeleton.map((entry) => entry.text).join('\n');

  const { qualifiedName: symbol, kind, startLine, endLine } = definition;
  if (text.length <= maxChars) return [{ symbol, kind, startLine, endLine, text }];
  // An oversized skeleton (a type with many fields) is cut between its lines; each part names
  // the source lines its skeleton lines stand for.
  const entries = skeleton.map((entry, index) => ({ line: index, text: entry.text }));
  return packLines(entries, maxChars).map((group, index) => ({
    symbol: `${symbol}#part${index + 1}`,
    kind,
    startLine: skeleton[group[0]!.line]!.from,
    endLine: skeleton[group[group.length - 1]!.line]!.to,
    text: group.map((entry) => entry.text).join('\n'),
  }));
}

function collapsed(body: string): string {
  const indentation = /^[ \t]*/.exec(body)![0];
  return body.trimStart().startsWith('{') ? `${indentation}{ … }` : `${indentation}...`;
}

/**
 * The runs of lines outside every definition (imports, constants, top-level statements), verbatim:
 * a run ends where a definition comes between two such lines, so each chunk's lines are exactly
 * its text. Runs of only blank lines and brackets are left out.
 */
function toplevelPieces(definitions: readonly Definition[], lines: Lines, maxChars: number): Piece[] {
  const covered = new Uint8Array(lines.count + 2);
  for (const definition of definitions) covered.fill(1, definition.startLine, definition.endLine + 1);
  const runs: Array<[number, number]> = [];
  for (let line = 1; line <= lines.count; line++) {
    if (covered[line] === 1 || !/[\p{L}\p{N}]/u.test(lines.text(line, line))) continue;
    const run = runs.at(-1);
    if (run && !covered.subarray(run[1] + 1, line).includes(1)) run[1] = line;
    else runs.push([line, line]);
  }
  const ranges = runs.flatMap(([from, to]) =>
    lines.length(from, to) <= maxChars
      ? [[from, to] as [number, number]]
      : packLines(lines.entries(from, to), maxChars).map(rangeOf),
  );
  return ranges.map(([from, to], index) => ({
    symbol: ranges.length === 1 ? '<module>' : `<module>#part${index + 1}`,
    kind: 'toplevel' as const,
    startLine: from,
    endLine: to,
    text: lines.text(from, to),
  }));
}

/** Overlapping line windows, narrowed when long lines would push one over the budget. */
function windowPieces(lines: Lines, maxChars: number): Piece[] {
  const pieces: Piece[] = [];
  for (let start = 1; start <= lines.count; ) {
    let end = Math.min(lines.count, start + WINDOW_LINES - 1);
    while (end > start && lines.length(start, end) > maxChars) end--;
    pieces.push({
      symbol: `<lines ${start}-${end}>`,
      kind: 'window',
      startLine: start,
      endLine: end,
      text: lines.text(start, end),
    });
    if (end === lines.count) break;
    start = Math.max(start + 1, end - WINDOW_OVERLAP + 1);
  }
  return pieces;
}

interface LineEntry {
  line: number;
  text: string;
}

/** Consecutive groups of entries, each at most `maxChars` long (a longer single line stays whole). */
function packLines(entries: readonly LineEntry[], maxChars: number): LineEntry[][] {
  const groups: LineEntry[][] = [];
  let group: LineEntry[] = [];
  let size = 0;
  for (const entry of entries) {
    if (group.length > 0 && size + entry.text.length + 1 > maxChars) {
      groups.push(group);
      group = [];
      size = 0;
    }
    group.push(entry);
    size += entry.text.length + 1;
  }
  if (group.length > 0) groups.push(group);
  return groups;
}

function rangeOf(group: readonly LineEntry[]): [number, number] {
  return [group[0]!.line, group[group.length - 1]!.line];
}

/** The source by lines: 1-based, text without line terminators. */
class Lines {
  private readonly starts: number[] = [0];

  constructor(readonly source: string) {
    for (let at = source.indexOf('\n'); at !== -1; at = source.indexOf('\n', at + 1)) this.starts.push(at + 1);
    // A final newline does not start another line.
    if (source.endsWith('\n')) this.starts.pop();
  }

  get count(): number {
    return this.starts.length;
  }

  /** The 1-based line the character at `offset` is on. */
  lineAt(offset: number): number {
    let low = 0;
    let high = this.starts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (this.starts[middle]! <= offset) low = middle;
      else high = middle - 1;
    }
    return low + 1;
  }

  /** Lines `from`..`to` without the terminator of the last (a blank last line stays, as ''). */
  text(from: number, to: number): string {
    if (to < this.count) return this.source.slice(this.starts[from - 1], this.starts[to]! - 1).replace(/\r$/, '');
    return this.source.slice(this.starts[from - 1]).replace(/\r?\n$/, '');
  }

  isBlank(line: number): boolean {
    return this.text(line, line).trim() === '';
  }

  length(from: number, to: number): number {
    const end = to < this.count ? this.starts[to]! : this.source.length;
    return end - this.starts[from - 1]!;
  }

  entries(from: number, to: number): LineEntry[] {
    const entries: LineEntry[] = [];
    for (let line = from; line <= to; line++) entries.push({ line, text: this.text(line, line) });
    return entries;
  }
}
