/**
 * Readies src/code for a first call that comes later: the MCP server's listing thread runs it
 * from the process's start (src/code/listing-thread.ts), and any host with idle time may.
 *
 * A fresh process's first call pays for more than its file: the tree-sitter runtime and the
 * grammar are compiled from WebAssembly, the definitions query is compiled (tree-sitter analyses
 * it against the grammar), and the parser, the query engine and our JavaScript run unoptimised
 * until V8 has seen them run for a while. On a 20,000-line TypeScript file that makes the first
 * listing 3–4 times slower than the next one. Warming up loads each language's grammar and query
 * and lists a generated sample source in pieces, so V8 compiles the hot code before it is needed
 * (measured with 300 ms idle after it, runs interleaved: zod's schemas.ts first listing ~450 →
 * ~120 ms, a 20,000-line file ~870 → ~530 ms; bench/code.ts prints the figures).
 *
 * Each step runs on the caller's thread, so the work is cut into steps of tens of milliseconds with
 * a turn of the event loop between them: a request that arrives meanwhile waits for one step, not
 * for the whole warm-up. Nothing is cached or kept beyond what the first real call keeps anyway
 * (the loaded grammar); the sample trees are deleted. Failures are swallowed: a warm-up must
 * never be what breaks a server, and a real call reports a broken grammar itself.
 */
import { findDefinitions } from './definitions.js';
import { loadGrammar, withTree } from './grammar.js';
import { languageByName, type LanguageInfo } from './languages.js';

/** Lines of sample source listed per step, and how many steps: ~500 lines in all. */
const SAMPLE_LINES_PER_STEP = 100;
const SAMPLE_STEPS = 5;

/**
 * One repeating unit of sample source per language: a documented function, a type with a
 * constructor and methods, a nested or bound function. JavaScript syntax serves TypeScript and
 * TSX too (their grammars parse it), C serves C++; a language without a unit gets its grammar
 * and query only.
 */
const SAMPLE_UNITS: Readonly<Record<string, (i: number) => string>> = {
  javascript: (i) =>
    `/** Sums. */\nexport function sum${i}(a, b) {\n  let total = a + ` +
    `b;\n  for (let x = 0; x < total; x++) total += x;\n  return ` +
    `total;\n}\n\n` +
    `const twice${i} = (n) => n * 2;\n\nexport class Service${i} ` +
    `extends Base {\n  handler = () => this.run(1);\n\n  ` +
    `constructor(name) {\n    super();\n    this.name = name;\n  }\n\n` +
    `  run(n) {\n    return twice${i}(n) + sum${i}(n, ${i});\n  ` +
    `}\n}\n\nmodule.exports.make${i} = function (name) {\n  return ` +
    `new Service${i}(name);\n};\n\n`,
  python: (i) =>
    `@decorator\ndef func_${i}(a, b):\n    """Sums."""\n    total = a ` +
    `+ b\n    for x in range(total):\n        total += x\n    return ` +
    `total\n\n\n` +
    `class Service${i}(Base):\n    def __init__(self, name):\n        ` +
    `self.name = name\n\n    def run(self, n):\n        def inner():\n ` +
    `           return n * 2\n        return inner()\n\n\n`,
  go: (i) =>
    `${i === 0 ? 'package sample\n\n' : ''}// Sum${i} sums.\nfunc ` +
    `Sum${i}(a, b int) int {\n\ttotal := a + b\n\tfor x := 0; x < ` +
    `total; x++ {\n\t\ttotal += x\n\t}\n\treturn total\n}\n\n` +
    `type Service${i} struct {\n\tname string\n}\n\nfunc (s ` +
    `*Service${i}) Run(n int) int {\n\ttwice := func(v int) int { ` +
    `return v * 2 }\n\treturn twice(n)\n}\n\n`,
  rust: (i) =>
    `/// Sums.\n#[inline]\npub fn sum_${i}(a: i64, b: i64) -> i64 {\n ` +
    `   let mut total = a + b;\n    for x in 0..total {\n        ` +
    `total += x;\n    }\n    total\n}\n\n` +
    `pub struct Service${i} {\n    name: String,\n}\n\nimpl Service${i} ` +
    `{\n    pub fn new(name: String) -> Self {\n        Self { name }\n ` +
    `   }\n\n    pub fn run(&self, n: i64) -> i64 {\n        n * 2\n  ` +
    `  }\n}\n\n`,
  java: (i) =>
    `class Service${i} {\n    private final String name;\n\n    /** ` +
    `Makes one. */\n    Service${i}(String name) {\n        this.name ` +
    `= name;\n    }\n\n    @Override\n    public String toString() {\n ` +
    `       return name;\n    }\n\n` +
    `    static int sum${i}(int a, int b) {\n        int total = a + ` +
    `b;\n        for (int x = 0; x < total; x++) {\n            total ` +
    `+= x;\n        }\n        return total;\n    }\n}\n\n`,
  csharp: (i) =>
    `public class Service${i}\n{\n    private readonly string name;\n\n ` +
    `   /// <summary>Makes one.</summary>\n    public ` +
    `Service${i}(string name)\n    {\n        this.name = name;\n    ` +
    `}\n\n` +
    `    public int Run(int n)\n    {\n        int Twice(int v) => v ` +
    `* 2;\n        return Twice(n);\n    }\n\n    public override ` +
    `string ToString() => name;\n}\n\n`,
  ruby: (i) =>
    `# Sums.\ndef sum_${i}(a, b)\n  total = a + b\n  (0...total).each { |x| total += x }\n  total\nend\n\n` +
    `class Service${i} < Base\n  def initialize(name)\n    @name = ` +
    `name\n  end\n\n  def run(n)\n    n * 2\n  end\nend\n\n`,
  php: (i) =>
    `${i === 0 ? '<?php\n\n' : ''}/** Sums. */\nfunction sum_${i}($a, ` +
    `$b) {\n    $total = $a + $b;\n    for ($x = 0; $x < $total; ` +
    `$x++) {\n        $total += $x;\n    }\n    return $total;\n}\n\n` +
    `class Service${i} extends Base {\n    public function ` +
    `__construct(private string $name) {}\n\n    public function ` +
    `run(int $n): int {\n        $twice = fn($v) => $v * 2;\n        ` +
    `return $twice($n);\n    }\n}\n\n`,
  c: (i) =>
    `/* Sums. */\nstatic int sum_${i}(int a, int b) {\n    int total ` +
    `= a + b;\n    for (int x = 0; x < total; x++) {\n        total ` +
    `+= x;\n    }\n    return total;\n}\n\n` +
    `struct service_${i} {\n    const char *name;\n};\n\nint ` +
    `*run_${i}(struct service_${i} *s, int *n) {\n    *n *= 2;\n    ` +
    `return n;\n}\n\n`,
  kotlin: (i) =>
    `/** Sums. */\nfun sum${i}(a: Int, b: Int): Int {\n    var total ` +
    `= a + b\n    for (x in 0 until total) total += x\n    return ` +
    `total\n}\n\n` +
    `class Service${i}(private val name: String) : Base() {\n    fun ` +
    `run(n: Int): Int {\n        val twice = { v: Int -> v * 2 }\n    ` +
    `    return twice(n)\n    }\n}\n\n`,
  swift: (i) =>
    `/// Sums.\nfunc sum${i}(_ a: Int, _ b: Int) -> Int {\n    var ` +
    `total = a + b\n    for x in 0..<total {\n        total += x\n    ` +
    `}\n    return total\n}\n\n` +
    `class Service${i}: Base {\n    let name: String\n\n    ` +
    `init(name: String) {\n        self.name = name\n    }\n\n    ` +
    `func run(_ n: Int) -> Int {\n        return n * 2\n    }\n}\n\n`,
  scala: (i) =>
    `object Sums${i} {\n  /** Sums. */\n  def sum(a: Int, b: Int): ` +
    `Int = {\n    var total = a + b\n    for (x <- 0 until total) ` +
    `total += x\n    total\n  }\n}\n\n` +
    `class Service${i}(name: String) extends Base {\n  def run(n: Int): Int = n * 2\n}\n\n`,
  shell: (i) =>
    `# Sums.\nsum_${i}() {\n  local total=$(( $1 + $2 ))\n  for x in ` +
    `$(seq 1 "$total"); do\n    total=$(( total + x ))\n  done\n  ` +
    `echo "$total"\n}\n\n`,
  lua: (i) =>
    `-- Sums.\nlocal function sum_${i}(a, b)\n  local total = a + b\n ` +
    ` for x = 0, total do\n    total = total + x\n  end\n  return ` +
    `total\nend\n\n` +
    `function Service:run_${i}(n)\n  return n * 2\nend\n\n`,
  elixir: (i) =>
    `defmodule Service${i} do\n  @doc "Sums."\n  def sum(a, b) do\n   ` +
    ` Enum.reduce(0..(a + b), a + b, fn x, total -> total + x end)\n  ` +
    `end\n\n` +
    `  defp twice(n), do: n * 2\nend\n\n`,
};
const SAMPLE_FAMILY: Readonly<Record<string, string>> = {
  javascript: 'javascript',
  typescript: 'javascript',
  tsx: 'javascript',
  python: 'python',
  go: 'go',
  rust: 'rust',
  java: 'java',
  csharp: 'csharp',
  ruby: 'ruby',
  php: 'php',
  c: 'c',
  cpp: 'c',
  kotlin: 'kotlin',
  swift: 'swift',
  scala: 'scala',
  shell: 'shell',
  lua: 'lua',
  elixir: 'elixir',
};

/** A turn of the event loop, so that pending I/O (a request) runs before the next step. */
const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Sample source of at least `lines` lines from a unit. */
function sampleSource(unit: (i: number) => string, lines: number): string {
  let source = '';
  for (let i = 0; source.split('\n').length <= lines; i += 1) source += unit(i);
  return source;
}

export interface WarmUpOptions {
  /**
   * Awaited before each step (a grammar's load, a sample listing): a host puts steps off while
   * it does latency-sensitive work on this thread (an MCP server: while a scenario measures).
   */
  beforeStep?: () => Promise<void>;
}

/**
 * Loads the grammars and queries of `languages` (ids or aliases, as languageByName takes; unknown
 * ones are skipped) and lists sample sources with them. Resolves when done; never rejects.
 */
export async function warmUpCode(
  languages: readonly string[] = ['typescript'],
  options: WarmUpOptions = {},
): Promise<void> {
  const beforeStep = options.beforeStep ?? (() => Promise.resolve());
  for (const name of languages) {
    const info = languageByName(name);
    if (!info) continue;
    try {
      await beforeStep();
      await loadGrammar(info);
      await yieldToEventLoop();
      await listSamples(info, beforeStep);
    } catch {
      // The first real call loads the grammar again and reports what went wrong.
    }
  }
}

/** The sample source the warm-up lists for a language (~100 lines), or undefined when it has none. */
export function warmUpSample(info: LanguageInfo): string | undefined {
  const family = SAMPLE_FAMILY[info.name];
  const unit = family === undefined ? undefined : SAMPLE_UNITS[family];
  return unit && sampleSource(unit, SAMPLE_LINES_PER_STEP);
}

async function listSamples(info: LanguageInfo, beforeStep: () => Promise<void>): Promise<void> {
  const source = warmUpSample(info);
  if (source === undefined) return;
  for (let step = 0; step < SAMPLE_STEPS; step += 1) {
    await beforeStep();
    // No document: the sample's tree is deleted, and nothing is left in the definition cache.
    await withTree(source, info, (tree, grammar) => findDefinitions(tree, grammar, info, source));
    await yieldToEventLoop();
  }
}
