/**
 * "A proposed change must parse" (DESIGN.md §6): the new code may not have more tree-sitter
 * syntax errors than the code it replaces. Comparing with the original, rather than demanding
 * zero, lets a lone method (which does not parse cleanly outside its class) be improved.
 */
import { countSyntaxErrors, type LanguageInfo } from '../code/index.js';

/** A message for the model when `after` adds syntax errors; undefined when it does not. */
export async function newSyntaxErrors(before: string, after: string, language: LanguageInfo): Promise<string | undefined> {
  const [old, next] = await Promise.all([countSyntaxErrors(before, language), countSyntaxErrors(after, language)]);
  if (next.count <= old.count) return undefined;
  return (
    `the new code does not parse as ${language.displayName}: ${next.count} syntax error(s) where the original had ${old.count}, ` +
    `first at line(s) ${next.firstLines.join(', ')} of the new code`
  );
}
