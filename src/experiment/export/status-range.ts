/**
 * An HTTP check's predicate as the status-code range engines take ("200", "200-399"): only
 * clauses on the status can be said so, each narrowing the range; anything else is refused.
 */
import type { Predicate } from '../predicate.js';

export function statusRange(predicate: Predicate): { low: number; high: number; text: string } | { reason: string } {
  let low = 100;
  let high = 599;
  for (const clause of predicate.clauses) {
    if (clause.subject.kind !== 'status')
      return { reason: `"${clause.text}": the engine's check judges the status code only` };
    const value = clause.value as number;
    switch (clause.op) {
      case '==':
        low = Math.max(low, value);
        high = Math.min(high, value);
        break;
      case '<':
        high = Math.min(high, value - 1);
        break;
      case '<=':
        high = Math.min(high, value);
        break;
      case '>':
        low = Math.max(low, value + 1);
        break;
      case '>=':
        low = Math.max(low, value);
        break;
      default:
        return { reason: `"${clause.text}": the engine takes one range of status codes` };
    }
  }
  if (low > high) return { reason: `"${predicate.text}" allows no status code` };
  return { low, high, text: low === high ? String(low) : `${low}-${high}` };
}
