/**
 * Unified diffs with the `diff` package: computing them locally, and checking that a diff a
 * model wrote really applies to the text it claims to change (code-analysis-anchors §7).
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

/** True when the text has at least one unified-diff hunk header. */
export function looksLikePatch(text: string): boolean {
  return /^@@ -\d+(,\d+)? \+\d+(,\d+)? @@/m.test(text);
}

export type PatchOutcome = { ok: true; result: string } | { ok: false; reason: string };

/**
 * Applies a model-written single-file diff to `original`: exactly first, then allowing one
 * mismatched context line (models often mangle a blank or an indent), never more.
 */
export function applyModelPatch(original: string, patchText: string): PatchOutcome {
  let patches;
  try {
    patches = parsePatch(patchText).filter((patch) => patch.hunks.length > 0);
  } catch (error) {
    return { ok: false, reason: `the diff cannot be parsed (${(error as Error).message})` };
  }
  if (patches.length === 0) return { ok: false, reason: 'the diff has no hunks' };
  if (patches.length > 1) return { ok: false, reason: `the diff changes ${patches.length} files; one was expected` };
  const [patch] = patches;
  for (const fuzzFactor of [0, 1]) {
    try {
      const result = applyPatch(original, patch!, { fuzzFactor });
      if (result !== false) return { ok: true, result };
    } catch (error) {
      return { ok: false, reason: `the diff is malformed (${(error as Error).message})` };
    }
  }
  return { ok: false, reason: 'its context and removed lines do not match the code' };
}
