/**
 * Tool-name globs: `*` matches any run of characters, `?` any one character, everything else
 * itself. Matched without regular expressions, so no pattern can make matching backtrack: the
 * pattern is cut at its stars and each piece is found at the leftmost place it fits after the
 * previous one (the leftmost fit never rules out a match a later fit would allow). The work is at
 * most the name's length times the pattern's, whatever the pattern.
 */

export function isGlob(pattern: string): boolean {
  return pattern.includes('*') || pattern.includes('?');
}

export function globMatches(pattern: string, name: string): boolean {
  if (!isGlob(pattern)) return pattern === name;
  const text = [...name];
  const pieces = pattern.split('*').map((piece) => [...piece]);
  const first = pieces[0]!;
  if (pieces.length === 1) return first.length === text.length && fitsAt(first, text, 0);
  const last = pieces[pieces.length - 1]!;
  if (first.length + last.length > text.length) return false;
  if (!fitsAt(first, text, 0) || !fitsAt(last, text, text.length - last.length)) return false;
  let from = first.length;
  const end = text.length - last.length;
  for (const piece of pieces.slice(1, -1)) {
    if (piece.length === 0) continue; // `**` is `*`
    const at = leftmostFit(piece, text, from, end);
    if (at < 0) return false;
    from = at + piece.length;
  }
  return true;
}

function fitsAt(piece: readonly string[], text: readonly string[], at: number): boolean {
  for (let i = 0; i < piece.length; i++) if (piece[i] !== '?' && piece[i] !== text[at + i]) return false;
  return true;
}

function leftmostFit(piece: readonly string[], text: readonly string[], from: number, end: number): number {
  for (let at = from; at + piece.length <= end; at++) if (fitsAt(piece, text, at)) return at;
  return -1;
}
