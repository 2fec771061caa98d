/**
 * Counting the places where tree-sitter could not parse the source.
 *
 * tree-sitter always produces a tree: what it cannot parse becomes an ERROR node (text it had to
 * skip) or a MISSING node (a token it had to invent, like a closing brace). Both count. Only
 * subtrees flagged `hasError` are walked, so a clean file costs one property read.
 */
import type { Node } from 'web-tree-sitter';

export interface SyntaxErrorSummary {
  /** ERROR plus MISSING nodes in the tree. */
  count: number;
  /** 1-based lines where the first few of them start, in source order. */
  firstLines: number[];
}

const MAX_REPORTED_LINES = 5;

export function summariseSyntaxErrors(root: Node): SyntaxErrorSummary {
  const summary: SyntaxErrorSummary = { count: 0, firstLines: [] };
  if (!root.hasError) return summary;
  const pending: Node[] = [root];
  while (pending.length > 0) {
    const node = pending.pop()!;
    if (node.isError || node.isMissing) {
      summary.count += 1;
      const line = node.startPosition.row + 1;
      if (summary.firstLines.length < MAX_REPORTED_LINES && !summary.firstLines.includes(line)) {
        summary.firstLines.push(line);
      }
    }
    // Children pushed in reverse so they pop in source order; MISSING leaves have hasError set.
    const children = node.children;
    for (let i = children.length - 1; i >= 0; i -= 1) {
      const child = children[i];
      if (child && (child.hasError || child.isMissing)) pending.push(child);
    }
  }
  return summary;
}
