/**
 * JSON held in a tool result's text content: read (bounded, objects and arrays only), compared as
 * values, and written back in the layout the server used, so that a rewritten text differs from
 * the server's only where its value does.
 */
import { DEFAULT_MAX_JSON_DEPTH, readJson } from '../jsonrpc/message.js';

/** One item of a tool result's `content`. */
export interface TextItem {
  type: string;
  text?: string;
  [key: string]: unknown;
}

/** The JSON object or array a text holds; a scalar or anything else is plain text. */
export function parseJsonText(text: string): { ok: true; value: unknown } | { ok: false } {
  const start = text.trimStart()[0];
  if (start !== '{' && start !== '[') return { ok: false };
  const read = readJson(text, { maxChars: Number.MAX_SAFE_INTEGER, maxDepth: DEFAULT_MAX_JSON_DEPTH });
  return read.ok ? { ok: true, value: read.value } : { ok: false };
}

/** `value` as JSON in the layout of `like`: its indentation (or none) and its trailing line break. */
export function serializeLike(value: unknown, like: string): string {
  const indent = /^\s*[[{]\r?\n([ \t]+)\S/.exec(like)?.[1];
  const body = JSON.stringify(value, null, indent);
  const trailing = /\s*$/.exec(like)![0];
  return body + trailing;
}

/** Structural equality of JSON values (object key order does not matter). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((item, i) => deepEqual(item, other[i]));
  }
  const keysA = Object.keys(a);
  const objectB = b as Record<string, unknown>;
  if (keysA.length !== Object.keys(objectB).length) return false;
  return keysA.every(
    (key) => Object.hasOwn(objectB, key) && deepEqual((a as Record<string, unknown>)[key], objectB[key]),
  );
}
