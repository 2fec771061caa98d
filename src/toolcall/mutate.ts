/**
 * Result mutations: what the client receives is really changed, with no marker.
 *
 *   schema_drift      renames, drops or retypes fields of structuredContent and of JSON text
 *                     content so the result no longer matches the tool's outputSchema
 *   partial_result    the result cut short, the same way in structuredContent and in the text
 *                     content (see partial-result.ts)
 *   empty_result      no content, no structuredContent
 *   corrupt           text cut so it is no longer the JSON it claims to be
 *   prompt_injection  the payload appended to every text item
 *   oversized         a text item of `bytes` bytes appended
 *
 * JSON text content is rewritten in its own layout (a pretty-printed text stays pretty-printed),
 * and a text whose value a mutation leaves alone keeps its exact characters. Whether a mutation
 * changed anything is judged by meaning (sameMeaning): JSON compared as values, not as text.
 */
import type { Random } from '../kernel/random.js';
import { isPlainObject } from '../config-reader.js';
import type { Mutation } from './faults.js';
import { deepEqual, parseJsonText, serializeLike, type TextItem } from './json-text.js';
import { partialResult } from './partial-result.js';

export interface ToolResult {
  content?: TextItem[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [key: string]: unknown;
}

type Schema = { type?: unknown; properties?: Record<string, Schema>; required?: string[]; [key: string]: unknown };

export function applyMutations(
  result: ToolResult,
  mutations: readonly Mutation[],
  outputSchema: Schema | undefined,
  random: Random,
): ToolResult {
  let out: ToolResult = structuredClone(result);
  for (const { kind, fault } of mutations) {
    switch (kind) {
      case 'schema_drift':
        if (out.structuredContent) out.structuredContent = drift(out.structuredContent, outputSchema, random);
        out.content = out.content?.map((item) =>
          mapJsonText(item, (value) => (isPlainObject(value) ? drift(value, outputSchema, random) : retype(value))),
        );
        break;
      case 'partial_result':
        out = partialResult(out);
        break;
      case 'empty_result':
        out = { ...out, content: [] };
        delete out.structuredContent;
        break;
      case 'corrupt':
        out.content = out.content?.map((item) => (isText(item) ? { ...item, text: corruptText(item.text) } : item));
        break;
      case 'prompt_injection':
        out.content = [...(out.content ?? [])].map((item) =>
          isText(item) ? { ...item, text: `${item.text}\n\n${fault.payload}` } : item,
        );
        if (!out.content.some((item) => item.type === 'text')) out.content.push({ type: 'text', text: fault.payload });
        break;
      case 'oversized':
        out.content = [...(out.content ?? []), { type: 'text', text: 'x'.repeat(fault.bytes) }];
        break;
    }
  }
  return out;
}

/**
 * Whether the client receives the same thing from both results: structuredContent compared as
 * values, text items as the JSON values they hold when both hold JSON (so pretty-printed and
 * compact texts of one value are the same), else as text; everything else as values.
 */
export function sameMeaning(a: ToolResult, b: ToolResult): boolean {
  const { content: contentA, ...restA } = a;
  const { content: contentB, ...restB } = b;
  if (!deepEqual(restA, restB)) return false;
  if (!Array.isArray(contentA) || !Array.isArray(contentB)) return deepEqual(contentA, contentB);
  if (contentA.length !== contentB.length) return false;
  return contentA.every((item, i) => sameItem(item, contentB[i]!));
}

function sameItem(a: TextItem, b: TextItem): boolean {
  if (!isText(a) || !isText(b)) return deepEqual(a, b);
  const { text: textA, ...restA } = a;
  const { text: textB, ...restB } = b;
  if (!deepEqual(restA, restB)) return false;
  if (textA === textB) return true;
  const valueA = parseJsonText(textA);
  const valueB = parseJsonText(textB);
  return valueA.ok && valueB.ok && deepEqual(valueA.value, valueB.value);
}

/** Changes fields so the object fails `schema`: required fields renamed/dropped/retyped, declared ones retyped. */
function drift(value: Record<string, unknown>, schema: Schema | undefined, random: Random): Record<string, unknown> {
  const out: Record<string, unknown> = { ...value };
  const required = new Set(schema?.required ?? []);
  const declared = schema?.properties ? Object.keys(schema.properties) : Object.keys(value);
  let changed = false;
  for (const key of Object.keys(value)) {
    if (!declared.includes(key)) continue;
    const mode = required.has(key) ? Math.floor(random.next() * 3) : 2;
    if (mode === 0) {
      out[`${key}_v2`] = out[key];
      delete out[key];
    } else if (mode === 1) delete out[key];
    else out[key] = retype(out[key]);
    changed = true;
  }
  // A required field the result lacked already? Retype everything else as a fallback.
  if (!changed) for (const key of Object.keys(out)) out[key] = retype(out[key]);
  return out;
}

function retype(value: unknown): unknown {
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value === 'string') return value.length;
  if (Array.isArray(value)) return { items: value };
  if (isPlainObject(value)) return [value];
  return 'null';
}

function corruptText(text: string): string {
  const cut = text.slice(0, Math.max(1, Math.ceil(text.length / 2)));
  return parseJsonText(cut).ok ? `${cut}{"` : cut;
}

function isText(item: TextItem): item is TextItem & { text: string } {
  return item.type === 'text' && typeof item.text === 'string';
}

/** Applies `change` to the JSON value a text item holds, written back in the text's own layout; other items as they
 * are. */
function mapJsonText(item: TextItem, change: (value: unknown) => unknown): TextItem {
  if (!isText(item)) return item;
  const parsed = parseJsonText(item.text);
  if (!parsed.ok) return item;
  const changed = change(parsed.value);
  return deepEqual(changed, parsed.value) ? item : { ...item, text: serializeLike(changed, item.text) };
}
