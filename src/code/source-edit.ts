/**
 * The one edit that turns one version of a source into the next, in the form tree-sitter's
 * `Tree.edit` takes: the changed range found by the longest common prefix and suffix.
 *
 * Several separate changes become one edit spanning from the first to the last; tree-sitter then
 * re-parses that span and reuses the subtrees on both sides. Offsets and columns are UTF-16 code
 * units, as web-tree-sitter counts them; rows are 0-based.
 */
export interface Point {
  row: number;
  column: number;
}

export interface SourceEdit {
  startIndex: number;
  oldEndIndex: number;
  newEndIndex: number;
  startPosition: Point;
  oldEndPosition: Point;
  newEndPosition: Point;
}

export function editBetween(before: string, after: string): SourceEdit {
  const shorter = Math.min(before.length, after.length);
  let start = 0;
  while (start < shorter && before.charCodeAt(start) === after.charCodeAt(start)) start++;
  let oldEnd = before.length;
  let newEnd = after.length;
  while (oldEnd > start && newEnd > start && before.charCodeAt(oldEnd - 1) === after.charCodeAt(newEnd - 1)) {
    oldEnd--;
    newEnd--;
  }
  // Never split a surrogate pair: the edit covers the whole character on either side.
  if (start > 0 && isHighSurrogate(before.charCodeAt(start - 1))) start--;
  if (oldEnd < before.length && isLowSurrogate(before.charCodeAt(oldEnd))) {
    oldEnd++;
    newEnd++;
  }
  const startPosition = pointAt(before, start, { row: 0, column: 0 }, 0);
  return {
    startIndex: start,
    oldEndIndex: oldEnd,
    newEndIndex: newEnd,
    startPosition,
    oldEndPosition: pointAt(before, oldEnd, startPosition, start),
    newEndPosition: pointAt(after, newEnd, startPosition, start),
  };
}

/** The row and column of `index`, counted on from a known point at `fromIndex`. */
function pointAt(text: string, index: number, from: Point, fromIndex: number): Point {
  let row = from.row;
  let lineStart = fromIndex - from.column;
  for (
    let newline = text.indexOf('\n', fromIndex);
    newline !== -1 && newline < index;
    newline = text.indexOf('\n', newline + 1)
  ) {
    row++;
    lineStart = newline + 1;
  }
  return { row, column: index - lineStart };
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
