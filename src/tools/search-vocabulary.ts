/**
 * The search limits and `lang` values the search tools' schemas quote, kept here so the MCP server
 * can describe those tools without loading src/index (SQLite, embedders) and tree-sitter.
 *
 * src/index defines them next to the code that enforces them and has no leaf module to import them
 * from; test/startup.test.ts checks that these equal src/index's own values, so they cannot drift.
 * Once src/index offers such a leaf module, import from it and delete this file.
 */
import { supportedLanguages } from '../code/languages.js';

export const DEFAULT_SEARCH_LIMIT = 10;
export const MAX_SEARCH_LIMIT = 50;
export const MAX_QUERY_CHARS = 32_000;

/** Languages src/index takes in line windows, having no grammar (index/languages.ts). */
const WINDOWED_LANGUAGES = ['kotlin', 'swift', 'scala', 'shell', 'lua', 'elixir', 'sql'];

/** Every value `lang` accepts, in src/index's order (acceptedLangValues). */
export function acceptedLangValues(): string[] {
  return ['all', ...supportedLanguages().map((info) => info.name), ...WINDOWED_LANGUAGES];
}
