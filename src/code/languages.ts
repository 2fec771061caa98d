/**
 * The languages faultline reads, by file extension and by name.
 *
 * Each language names its vendored grammar (grammars/<dir>/<wasm>) and its definitions query
 * (grammars/<dir>/definitions.scm); TSX shares TypeScript's query because its node types are a
 * superset. `separator` joins qualified names the way the language's own users write them.
 */
import { extname } from 'node:path';

export interface LanguageInfo {
  /** Stable lower-case id: `python`, `typescript`, `cpp`, `csharp`, … */
  readonly name: string;
  /** How people write it: `Python`, `C++`, `C#`, … */
  readonly displayName: string;
  /** File extensions with the dot, lower case. */
  readonly extensions: readonly string[];
  /** Other names accepted by languageByName (`py`, `c++`, `c#`, …). */
  readonly aliases: readonly string[];
  /** Joins qualified names: `.` (Class.method) or `::` (Type::method). */
  readonly separator: '.' | '::';
  /** Directory under grammars/ holding the wasm, LICENSE and definitions.scm. */
  readonly grammarDir: string;
  readonly wasmFile: string;
}

const LANGUAGES: readonly LanguageInfo[] = [
  lang('python', 'Python', ['.py', '.pyi'], ['py'], '.', 'python', 'tree-sitter-python.wasm'),
  lang(
    'javascript',
    'JavaScript',
    ['.js', '.mjs', '.cjs', '.jsx'],
    ['js', 'jsx', 'node'],
    '.',
    'javascript',
    'tree-sitter-javascript.wasm',
  ),
  lang('typescript', 'TypeScript', ['.ts', '.mts', '.cts'], ['ts'], '.', 'typescript', 'tree-sitter-typescript.wasm'),
  lang('tsx', 'TSX', ['.tsx'], [], '.', 'typescript', 'tree-sitter-tsx.wasm'),
  lang('go', 'Go', ['.go'], ['golang'], '.', 'go', 'tree-sitter-go.wasm'),
  lang('rust', 'Rust', ['.rs'], ['rs'], '::', 'rust', 'tree-sitter-rust.wasm'),
  lang('java', 'Java', ['.java'], [], '.', 'java', 'tree-sitter-java.wasm'),
  lang('ruby', 'Ruby', ['.rb'], ['rb'], '.', 'ruby', 'tree-sitter-ruby.wasm'),
  lang('c', 'C', ['.c', '.h'], [], '.', 'c', 'tree-sitter-c.wasm'),
  lang(
    'cpp',
    'C++',
    ['.cc', '.cpp', '.cxx', '.c++', '.hh', '.hpp', '.hxx', '.h++'],
    ['c++', 'cxx'],
    '::',
    'cpp',
    'tree-sitter-cpp.wasm',
  ),
  lang('csharp', 'C#', ['.cs'], ['c#', 'cs', 'c_sharp'], '.', 'csharp', 'tree-sitter-c_sharp.wasm'),
  lang('php', 'PHP', ['.php'], [], '::', 'php', 'tree-sitter-php.wasm'),
  lang('kotlin', 'Kotlin', ['.kt', '.kts'], ['kt'], '.', 'kotlin', 'tree-sitter-kotlin.wasm'),
  lang('swift', 'Swift', ['.swift'], [], '.', 'swift', 'tree-sitter-swift.wasm'),
  lang('scala', 'Scala', ['.scala'], [], '.', 'scala', 'tree-sitter-scala.wasm'),
  lang('shell', 'Shell', ['.sh', '.bash'], ['bash', 'sh'], '.', 'bash', 'tree-sitter-bash.wasm'),
  lang('lua', 'Lua', ['.lua'], [], '.', 'lua', 'tree-sitter-lua.wasm'),
  lang('elixir', 'Elixir', ['.ex', '.exs'], ['ex'], '.', 'elixir', 'tree-sitter-elixir.wasm'),
];

function lang(
  name: string,
  displayName: string,
  extensions: string[],
  aliases: string[],
  separator: '.' | '::',
  grammarDir: string,
  wasmFile: string,
): LanguageInfo {
  return Object.freeze({ name, displayName, extensions, aliases, separator, grammarDir, wasmFile });
}

const byExtension = new Map(LANGUAGES.flatMap((info) => info.extensions.map((ext) => [ext, info] as const)));
const byName = new Map(LANGUAGES.flatMap((info) => [info.name, ...info.aliases].map((key) => [key, info] as const)));

/** Every supported language, in a stable order. */
export function supportedLanguages(): readonly LanguageInfo[] {
  return LANGUAGES;
}

/** Every supported extension, sorted (for error messages that list what is accepted). */
export function supportedExtensions(): string[] {
  return [...byExtension.keys()].sort();
}

/** The language of a file, by its extension (case-insensitive); undefined when unsupported. */
export function languageForPath(path: string): LanguageInfo | undefined {
  return byExtension.get(extname(path).toLowerCase());
}

/** A language by its id or an alias (case-insensitive): `python`, `ts`, `c++`, `c#`, … */
export function languageByName(name: string): LanguageInfo | undefined {
  return byName.get(name.trim().toLowerCase());
}
