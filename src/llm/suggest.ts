/**
 * Suggests a better version of a function as a unified diff that applies to it.
 *
 * The model is asked for a diff. Whatever it sends is checked here, not trusted:
 *   diff that applies ─┐                        must parse and still
 *   code instead      ─┼─▶ improved function ─▶ define the function ─▶ diff recomputed locally
 *   empty block       ─┘      (no change; an empty reply is not one)
 *   anything else, or a diff that does not apply ─▶ one repair turn asking for the complete
 *   function instead ─▶ still unusable: the model's diff (or the diff to its code) is returned with
 *   applies=false and why; when neither reply held code or a diff (prose), an LlmError.
 */
import { LlmError, excerpt } from './errors.js';
import { extractFencedBlocks } from './fences.js';
import { stripReasoning } from './extract-json.js';
import { applyModelPatch, inConventionsOf, looksLikePatch, unifiedDiff } from './patch.js';
import { fenced, renderPrompt } from './prompts.js';
import type { CallOptions, ChatMessage, LlmProvider } from './provider.js';
import type { ReviewAspect } from './score.js';
import { lostFunction, newSyntaxErrors } from './syntax-check.js';
import type { LanguageInfo } from '../code/index.js';

/** A piece of indexed code related to the snippet, with where it lives. */
export interface RelatedCode {
  path: string;
  startLine: number;
  endLine: number;
  text: string;
}

/** Retrieval over the indexed source tree (RAG); the query is the snippet itself. */
export type SearchContext = (query: string, signal?: AbortSignal) => Promise<RelatedCode[]>;

export interface SuggestInput {
  aspect: ReviewAspect;
  snippet: string;
  lang: string;
  /** The grammar for `lang`, when there is one: results must then parse. */
  language?: LanguageInfo | undefined;
  score: number;
  targetScore: number;
  searchContext?: SearchContext | undefined;
}

export interface Suggestion {
  /** Unified diff from `a/snippet` to `b/snippet`; '' when no change is suggested. */
  diff: string;
  /** True when `diff` applies to the snippet and its result parses. */
  applies: boolean;
  /** Said to the reader when the diff is not simply what the model sent. */
  note?: string | undefined;
}

const MAX_RELATED = 5;
const MAX_RELATED_CHARS = 4_000;

/** The retrieval, the request and its repair share the LLM timeout. */
export function suggestBetterFunction(
  provider: LlmProvider,
  input: SuggestInput,
  options: CallOptions = {},
): Promise<Suggestion> {
  return provider.conversation(options, (signal) => suggest(provider, input, signal));
}

async function suggest(provider: LlmProvider, input: SuggestInput, signal: AbortSignal): Promise<Suggestion> {
  const snippet = withFinalNewline(input.snippet);
  const related = input.searchContext ? (await input.searchContext(input.snippet, signal)).slice(0, MAX_RELATED) : [];
  const messages = await renderPrompt(`suggest-${input.aspect}`, {
    lang: input.lang,
    score: String(input.score),
    target_score: String(input.targetScore),
    snippet: fenced(snippet, input.lang),
    context_rule: related.length > 0 ? ', and what the related code below provides' : '',
    context: related.length > 0 ? renderRelated(related, input.lang) : '',
  });

  const first = await provider.text(messages, { signal });
  const firstTry = await interpret(input.snippet, first, input.language);
  if (firstTry.ok) return firstTry.suggestion;

  const repair: ChatMessage[] = [
    ...messages,
    { role: 'assistant', content: first },
    {
      role: 'user',
      content:
        `That reply cannot be used: ${firstTry.reason}. ` +
        'Reply instead with the complete improved function in one fenced code block, and nothing else.',
    },
  ];
  const second = await provider.text(repair, { signal });
  const secondTry = await interpret(input.snippet, second, input.language);
  if (secondTry.ok) return secondTry.suggestion;
  const reason = `${firstTry.reason}; asked again: ${secondTry.reason}`;
  const shown = firstTry.diff !== '' ? firstTry.diff : secondTry.diff;
  if (shown === '') {
    throw new LlmError(
      'invalid_reply',
      `the model sent no usable code or diff, even when asked again (${reason}); it replied ${excerpt(second, 120)}`,
    );
  }
  return { diff: shown, applies: false, note: `The model's suggestion does not apply to the snippet (${reason}).` };
}

/** A failure's `diff` is what the model proposed, as a diff; '' when it proposed no code at all. */
type Interpretation = { ok: true; suggestion: Suggestion } | { ok: false; reason: string; diff: string };

/**
 * `original` is the snippet as the caller sent it: the diff returned applies to exactly that text
 * (its line ends, its missing final newline). The model saw it with a final newline, so its diff
 * is applied to that form.
 */
async function interpret(original: string, reply: string, language: LanguageInfo | undefined): Promise<Interpretation> {
  const snippet = withFinalNewline(original);
  const text = stripReasoning(reply).trim();
  // Only an explicit empty block means "no change"; an empty reply (no choices, null content, only
  // <think>…</think>) is a failed reply, never a successful empty diff.
  if (text === '') {
    return {
      ok: false,
      reason: reply.trim() === '' ? 'the reply is empty' : 'the reply holds only reasoning, no diff or code',
      diff: '',
    };
  }
  const blocks = extractFencedBlocks(text);
  const block = blocks.find((candidate) => looksLikePatch(candidate.body)) ?? blocks[0];
  const body = block ? block.body : text;

  if (block !== undefined && body.trim() === '')
    return { ok: true, suggestion: { diff: '', applies: true, note: 'No change suggested.' } };

  let improved: string;
  let note: string | undefined;
  const isPatch = looksLikePatch(body);
  if (isPatch) {
    const applied = applyModelPatch(snippet, body);
    if (!applied.ok) return { ok: false, reason: `the diff does not apply: ${applied.reason}`, diff: body };
    improved = applied.result;
  } else if (block || language) {
    // Code without a fence is accepted only when a grammar can vouch that it is code.
    improved = withFinalNewline(body);
    note = 'The model replied with code instead of a diff; the diff was computed locally.';
  } else {
    return { ok: false, reason: 'the reply is neither a unified diff nor a fenced code block', diff: '' };
  }

  const diff = unifiedDiff('a/snippet', 'b/snippet', original, inConventionsOf(original, improved));
  const problem = language
    ? ((await newSyntaxErrors(snippet, improved, language)) ?? (await lostFunction(snippet, improved, language)))
    : undefined;
  // Unfenced text the grammar does not vouch for is prose, not code: it is never shown as a diff.
  const proposedCode = isPatch || block !== undefined;
  if (problem)
    return {
      ok: false,
      reason: proposedCode ? problem : `the reply is not code (${problem})`,
      diff: proposedCode ? diff : '',
    };
  if (diff === '') return { ok: true, suggestion: { diff, applies: true, note: 'No change suggested.' } };
  return { ok: true, suggestion: { diff, applies: true, note } };
}

function renderRelated(related: RelatedCode[], lang: string): string {
  const parts = related.map((chunk) => {
    const text = chunk.text.length > MAX_RELATED_CHARS ? `${chunk.text.slice(0, MAX_RELATED_CHARS)}\n…` : chunk.text;
    return `${chunk.path}:${chunk.startLine}-${chunk.endLine}\n${fenced(text, lang)}`;
  });
  return `\nRelated code from the same project, for reference only (do not change it):\n\n${parts.join('\n\n')}\n`;
}

function withFinalNewline(text: string): string {
  return text.endsWith('\n') ? text : `${text}\n`;
}
