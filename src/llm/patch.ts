/**
 * Unified diffs with the `diff` package: computing them locally, and checking that a diff a
 * model wrote really applies to the text it claims to change: models miscount hunk headers and
 * misquote context lines, so a diff is trusted only once it applies.
 */
import { applyPatch, createTwoFilesPatch, parsePatch } from 'diff';

/** A unified diff from `before` to `after` with 3 lines of context; '' when they are equal. */
export function unifiedDiff(oldName: string, newName: string, before: string, after: string): string {
  if (before === after) return '';
  const patch = createTwoFilesPatch(oldName, newName, before, after, undefined, undefined, { context: 3 });
  // The package starts with an "Index:" line (when both names are equal) and a "=====" separator,
  // which `patch` and `git apply` do not need.
  return patch.replace(/^(Index: .*\n)?=+\n/, '');
}

/**
 * The model's version of a text written in the text's own conventions: CRLF line ends when most
 * of its lines end so, and no final newline when it has none. Models answer in LF and end with a
 * newline whatever they were shown, so without this a diff against a CRLF file rewrites every
 * line, and a diff against a text without a final newline does not apply to it (`git apply` and
 * `patch` need the "\ No newline at end of file" marker that only a true comparison produces).
 */
export function inConventionsOf(original: string, proposed: string): string {
  let text = proposed;
  const lineEnds = original.split('\n').length - 1;
  const crlfEnds = original.split('\r\n').length - 1;
  if (crlfEnds > 0 && crlfEnds * 2 > lineEnds) text = text.replace(/\r?\n/g, '\r\n');
  if (original !== '' && !original.endsWith('\n')) text = text.replace(/\r?\n$/, '');
  return text;
}

/**
 * True when the text reads as a diff: it has a hunk header (`@@`), a `---`/`+++` file header
 * pair, or only lines that start with ' ', '+' or '-', some of them '+' or '-' (a diff whose
 * headers the model left out).
 */
export function looksLikePatch(text: string): boolean {
  const lines = text.split('\n');
  if (lines.some((line) => line.startsWith('@@')) || hasFileHeaders(lines)) return true;
  const nonEmpty = lines.filter((line) => line.trim() !== '');
  return nonEmpty.some((line) => /^[+-]/.test(line)) && nonEmpty.every((line) => /^[ +-]/.test(line));
}

export type PatchOutcome = { ok: true; result: string } | { ok: false; reason: string };

/**
 * Applies a model-written single-file diff to `original`: exactly first, then allowing one
 * mismatched context line (models often mangle a blank or an indent), never more. Line ends are
 * compared without trailing whitespace, so a CRLF snippet takes an LF diff. The diff is
 * normalised first (see normaliseModelPatch).
 */
export function applyModelPatch(original: string, patchText: string): PatchOutcome {
  let patches;
  try {
    patches = parsePatch(normaliseModelPatch(patchText)).filter((patch) => patch.hunks.length > 0);
  } catch (error) {
    return { ok: false, reason: `the diff cannot be parsed (${(error as Error).message})` };
  }
  if (patches.length === 0) return { ok: false, reason: 'the diff has no hunks' };
  if (patches.length > 1) return { ok: false, reason: `the diff changes ${patches.length} files; one was expected` };
  const [patch] = patches;
  // Models often number hunks by the line in the file, not in the snippet: the package searches
  // around the given start, but from a start far past the end that search runs for ever. Starts
  // past the end are moved to it; the search still finds the hunk wherever it matches.
  const lineCount = original.split('\n').length - (original.endsWith('\n') ? 1 : 0);
  const pastEnd = patch!.hunks.find((hunk) => hunk.oldStart > lineCount + 1)?.oldStart;
  for (const hunk of patch!.hunks) {
    hunk.oldStart = Math.min(hunk.oldStart, lineCount + 1);
    hunk.newStart = Math.min(hunk.newStart, lineCount + 1);
  }
  // `line` is undefined when a hunk reaches past the end of the text (the package asks anyway).
  const compareLine = (
    _lineNumber: number,
    line: string | undefined,
    _operation: string,
    patchContent: string,
  ): boolean => typeof line === 'string' && line.trimEnd() === patchContent.trimEnd();
  for (const fuzzFactor of [0, 1]) {
    try {
      const result = applyPatch(original, patch!, { fuzzFactor, compareLine });
      if (result !== false) return { ok: true, result };
    } catch (error) {
      return { ok: false, reason: `the diff is malformed (${(error as Error).message})` };
    }
  }
  if (pastEnd !== undefined) {
    return {
      ok: false,
      reason:
        `a hunk header (@@ -${pastEnd}) starts past the end of the ` +
        `snippet, which has ${lineCount} lines, and its lines match ` +
        `nowhere in it`,
    };
  }
  return { ok: false, reason: 'its context and removed lines do not match the code' };
}

/**
 * What models get wrong in hand-written diffs, put right before `diff` parses them (it rejects a
 * hunk whose header counts differ from its lines): every hunk header is recounted from the lines
 * under it, a bare `@@` gets numbers, and a diff with no hunk header at all becomes one hunk.
 * Start lines are kept when given; applyPatch searches around them anyway. Trailing blank lines
 * (left by a code fence) are not context.
 */
export function normaliseModelPatch(text: string): string {
  const lines = text.split('\n');
  while (lines.length > 0 && lines[lines.length - 1]!.trim() === '') lines.pop();
  if (!lines.some((line) => line.startsWith('@@'))) {
    let firstBodyLine = 0;
    while (firstBodyLine < lines.length && !/^[ +-]/.test(lines[firstBodyLine]!)) firstBodyLine++;
    if (hasFileHeaders(lines.slice(firstBodyLine, firstBodyLine + 2))) firstBodyLine += 2;
    lines.splice(firstBodyLine, 0, '@@ -1 +1 @@');
  }
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const header = /^@@(?:\s*-(\d+)(?:,\d+)?\s+\+(\d+)(?:,\d+)?)?\s*(?:@@)?(.*)$/.exec(lines[i]!);
    if (!header) {
      out.push(lines[i]!);
      continue;
    }
    let end = i + 1;
    while (end < lines.length && !endsHunk(lines, end)) end++;
    // A context line that lost its leading space is still context.
    const body = lines.slice(i + 1, end).map((line) => (/^[ +\\-]/.test(line) || line === '' ? line : ` ${line}`));
    let oldCount = 0;
    let newCount = 0;
    for (const line of body) {
      if (line.startsWith('+')) newCount++;
      else if (line.startsWith('-')) oldCount++;
      else if (!line.startsWith('\\')) [oldCount, newCount] = [oldCount + 1, newCount + 1];
    }
    const [oldStart, newStart] = [Number(header[1] ?? 1), Number(header[2] ?? 1)];
    out.push(`@@ -${oldStart},${oldCount} +${newStart},${newCount} @@${header[3] ?? ''}`, ...body);
    i = end - 1;
  }
  return out.join('\n') + '\n';
}

/** A hunk ends at the next hunk header, file header pair or `diff --git` line. */
function endsHunk(lines: string[], index: number): boolean {
  const line = lines[index]!;
  return line.startsWith('@@') || line.startsWith('diff ') || hasFileHeaders(lines.slice(index, index + 2));
}

function hasFileHeaders(lines: string[]): boolean {
  return lines.some((line, index) => line.startsWith('--- ') && lines[index + 1]?.startsWith('+++ ') === true);
}
