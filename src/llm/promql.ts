/**
 * A light syntax check for PromQL written by a model. It is not a parser: it catches what models
 * actually get wrong (unclosed brackets or quotes, malformed range durations, a dangling
 * operator, prose or placeholders instead of a query) and lets everything else through.
 */

const DURATION = /^(\d+(ms|s|m|h|d|w|y))+$/;
const RANGE = /^\s*(\S+?)\s*(:\s*(\S*)\s*)?$/;
const CLOSERS: Record<string, string> = { ')': '(', ']': '[', '}': '{' };

/** A message saying what is wrong, or undefined when nothing obvious is. */
export function checkPromQL(expression: string): string | undefined {
  const expr = expression.trim();
  if (expr === '') return 'the PromQL expression is empty';
  if (/<[A-Za-z_][A-Za-z0-9_-]*>|\{\{/.test(expr)) {
    return 'the PromQL expression contains a placeholder such as <service> or {{…}}';
  }

  const stack: Array<{ open: string; at: number }> = [];
  for (let i = 0; i < expr.length; i++) {
    const ch = expr[i]!;
    if (ch === '"' || ch === "'" || ch === '`') {
      const end = closingQuote(expr, i);
      if (end === -1) return `the PromQL expression has an unclosed ${ch} string`;
      i = end;
    } else if (ch === '(' || ch === '[' || ch === '{') {
      stack.push({ open: ch, at: i });
    } else if (ch in CLOSERS) {
      const top = stack.pop();
      if (!top || top.open !== CLOSERS[ch]) return `the PromQL expression has an unmatched "${ch}"`;
      if (ch === ']') {
        const problem = checkRange(expr.slice(top.at + 1, i));
        if (problem) return problem;
      }
    }
  }
  if (stack.length > 0) return `the PromQL expression has an unclosed "${stack[stack.length - 1]!.open}"`;
  if (!/[A-Za-z_:][A-Za-z0-9_:]*/.test(expr)) return 'the PromQL expression names no metric or function';
  if (/(\+|-|\*|\/|%|\^|==|!=|<=|>=|<|>|\band\b|\bor\b|\bunless\b)\s*$/.test(expr)) {
    return 'the PromQL expression ends with an operator';
  }
  return undefined;
}

/** `5m`, or a subquery `30m:1m` / `30m:`. */
function checkRange(inside: string): string | undefined {
  const match = RANGE.exec(inside);
  const [range, step] = [match?.[1] ?? '', match?.[3]];
  if (!DURATION.test(range) || (step !== undefined && step !== '' && !DURATION.test(step))) {
    return `the PromQL range "[${inside}]" is not a duration such as [5m] or a subquery such as [30m:1m]`;
  }
  return undefined;
}

function closingQuote(expr: string, start: number): number {
  const quote = expr[start];
  for (let i = start + 1; i < expr.length; i++) {
    if (expr[i] === '\\' && quote !== '`') i++;
    else if (expr[i] === quote) return i;
  }
  return -1;
}
