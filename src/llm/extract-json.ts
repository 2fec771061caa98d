/**
 * The project's one tolerant JSON extractor for model replies.
 *
 * Models wrap JSON in ```json fences, put a sentence before or after it, or (reasoning models
 * served by Ollama) emit a <think>…</think> preamble. We look, in order, at: the whole reply,
 * the contents of each fenced block, then every `{` or `[` in the text; each of those that
 * parses as JSON is a candidate. Only objects and arrays count: a bare number in prose ("1.") is
 * not an answer. `extractJson` takes the first candidate; a caller with a schema walks
 * `jsonCandidates` and takes the first that fits, so an aside such as "on a scale [0, 1]" before
 * the real answer does not hide it.
 */

import { extractFencedBlocks } from './fences.js';

export type ExtractResult = { ok: true; value: unknown } | { ok: false; reason: string };

const THINK_BLOCK = /<think>[\s\S]*?<\/think>/gi;
/** Each attempt may scan to the end of the reply; bounding them keeps a huge reply linear-ish. */
const MAX_SCAN_ATTEMPTS = 50;

export function extractJson(reply: string): ExtractResult {
  const first = jsonCandidates(reply).next();
  if (!first.done) return { ok: true, value: first.value };
  const empty = stripReasoning(reply).trim() === '';
  return { ok: false, reason: empty ? 'the reply is empty' : 'no JSON object or array was found in the reply' };
}

/** Every JSON object or array in the reply, in the order described above (repeats possible). */
export function* jsonCandidates(reply: string): Generator<unknown> {
  const text = stripReasoning(reply).trim();
  if (text === '') return;

  const whole = tryParse(text);
  if (whole.ok) yield whole.value;

  for (const block of extractFencedBlocks(text)) {
    const fenced = tryParse(block.body.trim());
    if (fenced.ok) yield fenced.value;
  }

  let attempts = 0;
  for (let start = 0; start < text.length && attempts < MAX_SCAN_ATTEMPTS; start++) {
    const ch = text[start];
    if (ch !== '{' && ch !== '[') continue;
    attempts++;
    const end = matchingClose(text, start);
    if (end === -1) continue;
    const candidate = tryParse(text.slice(start, end + 1));
    if (candidate.ok) yield candidate.value;
  }
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
