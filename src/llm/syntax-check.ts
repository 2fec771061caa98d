/**
 * Checks on code a model proposes, with tree-sitter. A proposed change must parse (docs/design.md,
 * "7. Code, index and LLM"): the new code may not have more syntax errors than the code it replaces (comparing with the
 * original, rather than demanding zero, lets a lone method that does not parse cleanly outside
 * its class be improved). And a better version of a function must still define that function.
 */
import { countSyntaxErrors, listFunctions, type LanguageInfo } from '../code/index.js';

/** A message for the model when `after` adds syntax errors; undefined when it does not. */
export async function newSyntaxErrors(
  before: string,
  after: string,
  language: LanguageInfo,
): Promise<string | undefined> {
  const [old, next] = await Promise.all([countSyntaxErrors(before, language), countSyntaxErrors(after, language)]);
  if (next.count <= old.count) return undefined;
  return (
    `the new code does not parse as ${language.displayName}: ${next.count} ` +
    `syntax error(s) where the original had ${old.count}, ` +
    `first at line(s) ${next.firstLines.join(', ')} of the new code`
  );
}

/**
 * A message when `after` no longer defines the first function `before` defines: the reply is
 * about some other code (or is not code at all, yet happens to parse). Undefined when it does,
 * or when `before` defines no function tree-sitter can see.
 */
export async function lostFunction(before: string, after: string, language: LanguageInfo): Promise<string | undefined> {
  const [old, next] = await Promise.all([listFunctions(before, language), listFunctions(after, language)]);
  const wanted = old.definitions[0]?.name;
  if (wanted === undefined || next.definitions.some((definition) => definition.name === wanted)) return undefined;
  return `the new code does not define ${wanted}, the function to improve`;
}
