/**
 * Result mutations: what the client receives is really changed, with no marker.
 *
 *   schema_drift      renames, drops or retypes fields of structuredContent and of JSON text
 *                     content so the result no longer matches the tool's outputSchema
 *   partial_result    arrays cut to half, non-JSON text cut to half
 *   empty_result      no content, no structuredContent
 *   corrupt           text cut so it is no longer the JSON it claims to be
 *   prompt_injection  the payload appended to every text item
 *   oversized         a text item of `bytes` bytes appended
 */
import type { Random } from '../proxy/random.js';
import { isPlainObject } from '../config-reader.js';
import type { Mutation } from './faults.js';

export interface ToolResult {
  content?: Array<{ type: string; text?: string; [key: string]: unknown }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [key: string]: unknown;
}

type Schema = { type?: unknown; properties?: Record<string, Schema>; required?: string[]; [key: string]: unknown };

export function applyMutations(result: ToolResult, mutations: readonly Mutation[], outputSchema: Schema | undefined, random: Random): ToolResult {
  let out: ToolResult = structuredClone(result);
  for (const { kind, fault } of mutations) {
    switch (kind) {
      case 'schema_drift':
        if (out.structuredContent) out.structuredContent = drift(out.structuredContent, outputSchema, random);
        out.content = out.content?.map((item) => mapJsonText(item, (value) => (isPlainObject(value) ? drift(value, outputSchema, random) : retype(value))));
        break;
      case 'partial_result':
        if (out.structuredContent) out.structuredContent = truncate(out.structuredContent) as Record<string, unknown>;
        out.content = out.content?.map((item) => {
          if (item.type !== 'text' || typeof item.text !== 'string') return item;
          const parsed = parseJson(item.text);
          if (parsed.ok) return { ...item, text: JSON.stringify(truncate(parsed.value)) };
          return { ...item, text: item.text.slice(0, Math.floor(item.text.length / 2)) };
        });
        if (out.content && out.content.length > 1) out.content = out.content.slice(0, Math.ceil(out.content.length / 2));
        break;
      case 'empty_result':
        out = { ...out, content: [] };
        delete out.structuredContent;
        break;
      case 'corrupt':
        out.content = out.content?.map((item) => (item.type === 'text' && typeof item.text === 'string' ? { ...item, text: corruptText(item.text) } : item));
        break;
      case 'prompt_injection':
        out.content = [...(out.content ?? [])].map((item) => (item.type === 'text' && typeof item.text === 'string' ? { ...item, text: `${item.text}\n\n${fault.payload}` } : item));
        if (!out.content.some((item) => item.type === 'text')) out.content.push({ type: 'text', text: fault.payload });
        break;
      case 'oversized':
        out.content = [...(out.content ?? []), { type: 'text', text: 'x'.repeat(fault.bytes) }];
        break;
    }
  }
  return out;
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

function truncate(value: unknown): unknown {
  if (Array.isArray(value)) return value.slice(0, Math.floor(value.length / 2)).map(truncate);
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, truncate(v)]));
  return value;
}

function corruptText(text: string): string {
  const cut = text.slice(0, Math.max(1, Math.ceil(text.length / 2)));
  return parseJson(cut).ok ? `${cut}{"` : cut;
}

function mapJsonText(item: { type: string; text?: string; [key: string]: unknown }, change: (value: unknown) => unknown): typeof item {
  if (item.type !== 'text' || typeof item.text !== 'string') return item;
  const parsed = parseJson(item.text);
  return parsed.ok ? { ...item, text: JSON.stringify(change(parsed.value)) } : item;
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  const trimmed = text.trimStart();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

