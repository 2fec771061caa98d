/**
 * partial_result: the result cut short, the same way wherever a client reads it.
 *
 *   arrays    keep their first half (rounded down), their kept items cut in turn
 *   strings   long ones (LONG_STRING_CHARS or more, or several lines) keep their first half,
 *             cut after a line break when the first half has one
 *   content   of several items, the first half (rounded up) is kept
 *
 * A result with nothing of that kind to cut (no array with items, no long string) has every string
 * of two or more characters cut instead, so a short answer is cut too; a result with nothing at all
 * to cut (server-memory's empty graph) is left exactly as it is.
 *
 * The cut is chosen once, on structuredContent when there is one (else on the content), and
 * applied to both: a text item holding JSON becomes its value cut the same way, in its own
 * layout; a plain text item is cut as a string is. So a client sees the same partial result
 * whether it reads structuredContent (as MCP asks when an outputSchema exists) or the text —
 * server-filesystem's `{content: "<file>"}` and its text lose the same second half.
 */
import { isPlainObject } from '../config-reader.js';
import { parseJsonText, serializeLike, type TextItem } from './json-text.js';
import type { ToolResult } from './mutate.js';

/** Strings at least this long are cut under the normal cut. */
export const LONG_STRING_CHARS = 64;

type Cut = 'normal' | 'everything';

export function partialResult(result: ToolResult): ToolResult {
  const out: ToolResult = { ...result };
  const content = Array.isArray(result.content) ? result.content : undefined;
  const normalCutActs =
    result.structuredContent !== undefined
      ? cutValue(result.structuredContent, 'normal').changed
      : (content ?? []).some((item) => cutValue(readItem(item), 'normal').changed);
  const how: Cut = normalCutActs ? 'normal' : 'everything';
  if (result.structuredContent)
    out.structuredContent = cutValue(result.structuredContent, how).value as Record<string, unknown>;
  if (content) {
    const kept = content.length > 1 ? content.slice(0, Math.ceil(content.length / 2)) : content;
    out.content = kept.map((item) => cutItem(item, how));
  }
  return out;
}

function readItem(item: TextItem): unknown {
  if (item.type !== 'text' || typeof item.text !== 'string') return undefined;
  const parsed = parseJsonText(item.text);
  return parsed.ok ? parsed.value : item.text;
}

function cutItem(item: TextItem, how: Cut): TextItem {
  if (item.type !== 'text' || typeof item.text !== 'string') return item;
  const parsed = parseJsonText(item.text);
  if (!parsed.ok) {
    const cut = cutValue(item.text, how);
    return cut.changed ? { ...item, text: cut.value as string } : item;
  }
  const cut = cutValue(parsed.value, how);
  return cut.changed ? { ...item, text: serializeLike(cut.value, item.text) } : item;
}

function cutValue(value: unknown, how: Cut): { value: unknown; changed: boolean } {
  if (typeof value === 'string') {
    const cuttable = how === 'everything' ? value.length >= 2 : isLong(value);
    return cuttable ? { value: cutString(value), changed: true } : { value, changed: false };
  }
  if (Array.isArray(value)) {
    const kept = value.slice(0, Math.floor(value.length / 2)).map((item) => cutValue(item, how));
    return { value: kept.map((k) => k.value), changed: kept.length < value.length || kept.some((k) => k.changed) };
  }
  if (isPlainObject(value)) {
    let changed = false;
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const cut = cutValue(item, how);
      changed ||= cut.changed;
      Object.defineProperty(out, key, { value: cut.value, enumerable: true, writable: true, configurable: true }); // "__proto__" stays a key
    }
    return { value: out, changed };
  }
  return { value, changed: false };
}

function isLong(text: string): boolean {
  return text.length >= LONG_STRING_CHARS || text.trim().includes('\n');
}

/** The first half of a string, ending after a line break when the first half has one; never half a surrogate pair. */
export function cutString(text: string): string {
  const half = Math.floor(text.length / 2);
  const lineEnd = text.lastIndexOf('\n', half - 1);
  let end = lineEnd > 0 ? lineEnd + 1 : half;
  const code = text.charCodeAt(end - 1);
  if (end > 0 && end < text.length && code >= 0xd800 && code <= 0xdbff) end -= 1;
  return text.slice(0, end);
}
