/**
 * The LLM layer: providers (OpenAI-compatible, Ollama) behind one interface, structured output
 * validated with zod, and the review operations the MCP tools and the CLI use.
 *
 * - `createProvider(llmConfig, env?)` → `{ok: true, provider}` or `{ok: false, reason}` (the
 *   reason names the env var / flag to set). `PROVIDER_DEFAULTS` lists endpoints and models.
 * - `LlmProvider`: `text(messages)`, `structured(messages, zodSchema, {name, check?})`,
 *   `embed(texts)`; each takes `{signal}` and is bounded by the configured timeout (retries and
 * the repair turn included); `conversation({signal}, work)` bounds several calls by one. Failures are `LlmError`
 * (`kind`), cancellation `CancelledError`.
 * - Operations: `scoreSnippet`, `suggestBetterFunction` (optional `searchContext` for RAG),
 *   `suggestSlos`, `proposeFileChanges`.
 * - `extractJson(reply)`: the project's one tolerant JSON extractor.
 */
export { createProvider, PROVIDER_DEFAULTS, type ProviderChoice, type CreateProviderOptions } from './select.js';
export {
  LlmProvider,
  type ChatMessage,
  type CallOptions,
  type StructuredOptions,
  type ProviderInfo,
} from './provider.js';
export { LlmError, type LlmErrorKind } from './errors.js';
export { extractJson } from './extract-json.js';
export { DEFAULT_RETRY, type RetryOptions } from './retry.js';
export { scoreSnippet, CodeScore, type ReviewAspect, type ScoreInput } from './score.js';
export {
  suggestBetterFunction,
  type SearchContext,
  type RelatedCode,
  type Suggestion,
  type SuggestInput,
} from './suggest.js';
export { suggestSlos, Slo, SloList, type SloInput } from './slo.js';
export { proposeFileChanges, type FileChange, type FileChangeInput } from './file-changes.js';
