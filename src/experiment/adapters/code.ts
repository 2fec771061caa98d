/**
 * The code plane, for suggestions: the files of an app as the search index would take them
 * (src/search: .gitignore, dependency and build directories skipped, bounded), each read through
 * the one file-access rule (roots, secrets), and the calls and environment reads tree-sitter
 * finds in it (src/code).
 */
import type { FileAccess } from '../../access.js';
import { languageForPath, listCalls, type CallReport } from '../../code/index.js';
import { LanguageSelection, walkSourceTree } from '../../search/index.js';

export type { CallReport };

/** An app is read up to this many source files (a suggestion needs its clients, not a monorepo). */
export const MAX_SUGGEST_FILES = 2000;
const MAX_SUGGEST_BYTES = 32 * 1024 * 1024;

export interface ReadSource {
  /** Path as shown in evidence: relative to the directory given, or the file's own. */
  path: string;
  calls: CallReport;
}

export async function readSources(
  access: FileAccess,
  target: { sourceDir: string } | { file: string },
  signal?: AbortSignal,
): Promise<{ sources: ReadSource[]; skipped: string[] }> {
  const skipped: string[] = [];
  const files: Array<{ path: string; absolutePath: string }> = [];
  if ('file' in target) {
    files.push({ path: target.file, absolutePath: target.file });
  } else {
    const root = await access.resolveDirectory(target.sourceDir, 'source_dir');
    const walked = await walkSourceTree(root, {
      selection: LanguageSelection.parse('all'),
      access,
      signal,
      limits: { maxFiles: MAX_SUGGEST_FILES, maxBytes: MAX_SUGGEST_BYTES },
    });
    files.push(
      ...walked.files
        .filter((file) => file.language.grammar !== undefined)
        .map((file) => ({ path: file.path, absolutePath: file.absolutePath })),
    );
  }
  const sources: ReadSource[] = [];
  for (const file of files) {
    if (signal?.aborted) break;
    let text: string;
    try {
      text = (await access.readSourceFile(file.absolutePath, 'file' in target ? 'file' : 'source_dir')).text;
    } catch (error) {
      if ('file' in target) throw error;
      skipped.push(`${file.path}: ${(error as Error).message}`);
      continue;
    }
    const language = languageForPath(file.absolutePath, text);
    if (!language) {
      if ('file' in target) skipped.push(`${file.path}: not a language faultline parses`);
      continue;
    }
    sources.push({ path: file.path, calls: await listCalls(text, language) });
  }
  return { sources, skipped };
}
