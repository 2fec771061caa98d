/**
 * Proposes reliability and performance changes to a whole file. The model returns the new file
 * and its reasoning; `old` is the file as read from disk (never the model's echo of it) and
 * `diff` is computed here, so both are true by construction. When the file's language has a
 * grammar, the new file must not add syntax errors (one repair turn shows the model where).
 */
import { z } from 'zod';
import type { LanguageInfo } from '../code/index.js';
import { lenientNumber, lenientStringList, lenientText } from './lenient.js';
import { inConventionsOf, unifiedDiff } from './patch.js';
import { fenced, renderPrompt } from './prompts.js';
import type { CallOptions, LlmProvider } from './provider.js';
import { newSyntaxErrors } from './syntax-check.js';

const ProposedChange = z.object({
  score: lenientNumber(z.number().min(0).max(1).describe('how reliable and performant the original file is')),
  explanation: lenientText(z.string().min(1)),
  new: z.string().min(1).describe('the complete new file'),
  dependencies: lenientStringList(
    z.array(z.string()).describe('packages or modules the new file needs that the original did not import'),
  ),
});

export interface FileChange {
  score: number;
  explanation: string;
  old: string;
  new: string;
  dependencies: string[];
  diff: string;
}

export interface FileChangeInput {
  /** The path as shown to the model and in the diff headers. */
  path: string;
  source: string;
  /** The file's grammar when it has one; without one the parse check is skipped. */
  language: LanguageInfo | undefined;
}

export async function proposeFileChanges(
  provider: LlmProvider,
  input: FileChangeInput,
  options: CallOptions = {},
): Promise<FileChange> {
  const lang = input.language?.displayName ?? 'text';
  const messages = await renderPrompt('file-changes', {
    lang,
    file: input.path,
    snippet: fenced(input.source, input.language?.name ?? ''),
  });
  const language = input.language;
  const proposal = await provider.structured(messages, ProposedChange, {
    name: 'file_change',
    signal: options.signal,
    check: language ? (value) => newSyntaxErrors(input.source, value.new, language) : undefined,
  });
  // The file's own line ends and final newline: the model's LF text against a CRLF file would
  // otherwise be a diff of every line.
  const proposed = inConventionsOf(input.source, proposal.new);
  return {
    score: proposal.score,
    explanation: proposal.explanation,
    old: input.source,
    new: proposed,
    dependencies: proposal.dependencies,
    diff: unifiedDiff(input.path, input.path, input.source, proposed),
  };
}
