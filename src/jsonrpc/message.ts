/**
 * JSON-RPC 2.0 messages as they travel between an MCP client and server, and the one bounded way
 * to read one from a peer we do not trust (the probe's targets, the tool-call proxies' upstreams).
 *
 * A peer may send anything: every field is optional here, and readers check what they use.
 */

export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

export interface JsonRpcMessage {
  jsonrpc?: string;
  id?: string | number | null;
  method?: string;
  params?: Record<string, unknown> & { _meta?: Record<string, unknown> };
  result?: Record<string, unknown>;
  error?: JsonRpcError;
}

/** Bounds on one message read from a peer. */
export interface JsonLimits {
  /** Characters of JSON text. */
  maxChars: number;
  /** Nesting of arrays and objects. Deeper JSON is refused before JSON.parse or JSON.stringify could overflow the
   * stack. */
  maxDepth: number;
}

/** Far above any real MCP message's nesting, far below where V8's JSON recursion fails (~5,000). */
export const DEFAULT_MAX_JSON_DEPTH = 512;

/** A reading: the value, or why there is none (`reason`: over the size, too deep, or not JSON). */
export type JsonReading =
  | { ok: true; value: unknown }
  | { ok: false; reason: 'size' | 'depth' | 'syntax'; problem: string };

/**
 * The nesting depth of JSON text, counting brackets outside strings, stopping as soon as it passes
 * `limit` (linear, no recursion, so it cannot itself overflow).
 */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > limit) return true;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) depth--;
  }
  return false;
}

/**
 * The first key given twice in one object of `json` (text JSON.parse accepted), else undefined.
 * JSON.parse keeps the last of a repeated key without a word; a reader that must not guess which
 * one was meant (a plan, a tool's structured argument) refuses the text instead.
 */
export function repeatedKey(json: string): string | undefined {
  return repeatedKeyAt(json)?.key;
}

/** repeatedKey, with the offset in `json` of its second occurrence (for a line and column). */
export function repeatedKeyAt(json: string): { key: string; at: number } | undefined {
  /** Per open container: the keys of an object so far, or null for an array. */
  const open: Array<Set<string> | null> = [];
  let atKey = false;
  for (let i = 0; i < json.length; i++) {
    const c = json[i];
    if (c === '"') {
      let end = i + 1;
      // Bounded by the text: a string left open (text JSON.parse refused) ends the scan, not the process.
      while (end < json.length && json[end] !== '"') end += json[end] === '\\' ? 2 : 1;
      if (end >= json.length) return undefined;
      const keys = open[open.length - 1];
      if (atKey && keys) {
        // Decoded as JSON.parse does ("\u0061" is "a"), and only when there is an escape to decode.
        const raw = json.slice(i + 1, end);
        const key = raw.includes('\\') ? (JSON.parse(json.slice(i, end + 1)) as string) : raw;
        if (keys.has(key)) return { key, at: i };
        keys.add(key);
        atKey = false;
      }
      i = end;
    } else if (c === '{') {
      open.push(new Set());
      atKey = true;
    } else if (c === '[') {
      open.push(null);
      atKey = false;
    } else if (c === '}' || c === ']') {
      open.pop();
    } else if (c === ',') {
      atKey = open[open.length - 1] !== null;
    }
  }
  return undefined;
}

/** Parses JSON text from a peer within `limits`; says why when it cannot. */
export function readJson(text: string, limits: JsonLimits): JsonReading {
  if (text.length > limits.maxChars)
    return {
      ok: false,
      reason: 'size',
      problem: `a message of ${text.length} characters, above the ${limits.maxChars} accepted`,
    };
  if (jsonDepthExceeds(text, limits.maxDepth))
    return { ok: false, reason: 'depth', problem: `JSON nested deeper than ${limits.maxDepth} levels` };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, reason: 'syntax', problem: `invalid JSON (${(error as Error).message})` };
  }
}

/** A JSON-RPC message object (not an array, not a scalar). */
export function isMessageObject(value: unknown): value is JsonRpcMessage {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
