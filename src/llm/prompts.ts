/**
 * Prompt templates live in src/llm/prompts/*.md (shipped with the package) so they can be read
 * and reviewed as prose. Placeholders are `{{name}}`, replaced in one pass: a snippet that itself
 * contains `{{lang}}` is inserted verbatim, never substituted again.
 */
import { readFile } from 'node:fs/promises';
import type { ChatMessage } from './provider.js';

export type PromptName =
  | 'score-performance'
  | 'score-reliability'
  | 'suggest-performance'
  | 'suggest-reliability'
  | 'slo'
  | 'file-changes'
  | 'deep-analysis';

/** This module runs compiled from dist/src/llm/; the templates stay in <package>/src/llm/prompts/. */
const PROMPTS_DIR = new URL('../../../src/llm/prompts/', import.meta.url);

const cache = new Map<string, Promise<string>>();

function template(name: string): Promise<string> {
  let text = cache.get(name);
  if (!text) {
    text = readFile(new URL(`${name}.md`, PROMPTS_DIR), 'utf8');
    cache.set(name, text);
  }
  return text;
}

/** The system message and the named prompt with `vars` filled in. */
export async function renderPrompt(name: PromptName, vars: Record<string, string>): Promise<ChatMessage[]> {
  const [system, user] = await Promise.all([template('system'), template(name)]);
  return [
    { role: 'system', content: system.trim() },
    { role: 'user', content: fill(name, user, vars).trim() },
  ];
}

function fill(name: string, text: string, vars: Record<string, string>): string {
  return text.replace(/\{\{([a-z_]+)\}\}/g, (_, key: string) => {
    const value = vars[key];
    if (value === undefined) throw new Error(`prompt ${name} uses {{${key}}}, which was not given`);
    return value;
  });
}

/** Code in a fence longer than any backtick run inside it, so the code cannot close it. */
export function fenced(code: string, lang: string): string {
  const longestRun = Math.max(0, ...Array.from(code.matchAll(/`+/g), (match) => match[0].length));
  const fence = '`'.repeat(Math.max(3, longestRun + 1));
  const info = lang.replace(/[^A-Za-z0-9_+#.-]/g, '');
  return `${fence}${info}\n${code.endsWith('\n') ? code : `${code}\n`}${fence}`;
}
