/**
 * The project's one tolerant JSON extractor for model replies.
 *
 * Models wrap JSON in ```json fences, put a sentence before or after it, or (reasoning models
 * served by Ollama) emit a <think>…</think> preamble. We look, in order, at: the whole reply,
 * the contents of each fenced block, then every `{` or `[` in the text, and return the first
 * candidate that parses as JSON. Only objects and arrays count as found values: a bare number
 * in prose ("1.") is not an answer.
 */

import { extractFencedBlocks } from './fences.js';

export type ExtractResult = { ok: true; value: unknown } | { ok: false; reason: string };

const THINK_BLOCK = /<think>[\s\S]*?<\/think>/gi;
/** Each attempt may scan to the end of the reply; bounding them keeps a huge reply linear-ish. */
const MAX_SCAN_ATTEMPTS = 50;

export function extractJson(reply: string): ExtractResult {
  const text = stripReasoning(reply).trim();
  if (text === '') return { ok: false, reason: 'the reply is empty' };

  const whole = tryParse(text);
  if (whole.ok) return whole;

  for (const block of extractFencedBlocks(text)) {
    const fenced = tryParse(block.body.trim());
    if (fenced.ok) return fenced;
  }

  let attempts = 0;
  for (let start = 0; start < text.length && attempts < MAX_SCAN_ATTEMPTS; start++) {
    const ch = text[start];
    if (ch !== '{' && ch !== '[') continue;
    attempts++;
    const end = matchingClose(text, start);
    if (end === -1) continue;
    const candidate = tryParse(text.slice(start, end + 1));
    if (candidate.ok) return candidate;
  }
  return { ok: false, reason: 'no JSON object or array was found in the reply' };
}

/** Removes reasoning preambles that some models put before their answer. */
export function stripReasoning(reply: string): string {
  return reply.replace(THINK_BLOCK, '');
}

function tryParse(candidate: string): ExtractResult {
  if (!candidate.startsWith('{') && !candidate.startsWith('[')) return { ok: false, reason: 'not JSON' };
  try {
    return { ok: true, value: JSON.parse(candidate) };
  } catch (error) {
    return { ok: false, reason: (error as Error).message };
  }
}

/**
 * Index of the bracket that closes the one at `start`, skipping brackets inside JSON strings;
 * -1 when the text ends first. Mismatched kinds are left for JSON.parse to reject.
 */
function matchingClose(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === '{' || ch === '[') depth++;
    else if (ch === '}' || ch === ']') {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}
