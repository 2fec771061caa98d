/**
 * Which files an index takes, by the `lang` argument (the reference tool's names: `python`, `go`,
 * `rust`, `javascript`, `typescript`, `java`, `ruby`, …, or `all`).
 *
 * Languages with a vendored grammar are chunked by definition; SQL has no grammar here (none on
 * npm ships a WebAssembly build) and is indexed in line windows.
 * `typescript` also takes .tsx files, as in the reference tool.
 */
import { extname } from 'node:path';
import { InputError } from '../kernel/errors.js';
import { languageByName, languageForPath, supportedLanguages, type LanguageInfo } from '../code/languages.js';

/** A language a file is indexed as: its id, and its grammar when there is one. */
export interface IndexLanguage {
  name: string;
  grammar: LanguageInfo | undefined;
}

/** Languages without a grammar here: indexed in line windows. */
const WINDOWED_LANGUAGES: Readonly<Record<string, readonly string[]>> = {
  sql: ['.sql'],
};

const windowedByExtension = new Map(
  Object.entries(WINDOWED_LANGUAGES).flatMap(([name, extensions]) => extensions.map((ext) => [ext, name] as const)),
);

/** Every value `lang` accepts, for error messages and tool descriptions. */
export function acceptedLangValues(): string[] {
  return ['all', ...supportedLanguages().map((info) => info.name), ...Object.keys(WINDOWED_LANGUAGES)];
}

/** Decides, by extension, which files a `lang` value takes and as what language. */
export class LanguageSelection {
  private constructor(private readonly names: ReadonlySet<string> | 'all') {}

  /** Throws an InputError naming the accepted values for an unknown `lang`. */
  static parse(lang: string | undefined): LanguageSelection {
    const wanted = (lang ?? 'all').trim().toLowerCase();
    if (wanted === 'all' || wanted === '') return new LanguageSelection('all');
    if (WINDOWED_LANGUAGES[wanted]) return new LanguageSelection(new Set([wanted]));
    const info = languageByName(wanted);
    if (!info) throw new InputError(`lang: '${lang}' is not supported; accepted: ${acceptedLangValues().join(', ')}`);
    return new LanguageSelection(new Set(info.name === 'typescript' ? ['typescript', 'tsx'] : [info.name]));
  }

  /** The language `path` is indexed as, or undefined when this selection does not take it. */
  languageOf(path: string): IndexLanguage | undefined {
    const grammar = languageForPath(path);
    const name = grammar?.name ?? windowedByExtension.get(extname(path).toLowerCase());
    if (name === undefined) return undefined;
    // A `.h` header is C or C++ by its text, read later (src/code/header-language.ts): `cpp` takes it too.
    if (
      this.names !== 'all' &&
      !this.names.has(name) &&
      !(name === 'c' && this.names.has('cpp') && extname(path).toLowerCase() === '.h')
    )
      return undefined;
    return { name, grammar };
  }

  /** `all`, or the language ids joined with commas (what the index reports it took). */
  describe(): string {
    return this.names === 'all' ? 'all' : [...this.names].join(',');
  }
}
