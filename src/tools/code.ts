/**
 * fault_list_function_names and fault_extract_code_block: src/code behind fault's tool names and
 * argument names. Text content keeps fault's shapes (a JSON array of names; JSON {full, body});
 * structuredContent adds qualified names, kinds, lines and the syntax-error summary.
 *
 * src/code loads on the first call, not when the server starts; with the code cache on (the
 * default), definitions listed before by any process are answered from the data directory.
 */
import * as z from 'zod';
import { LOCAL_READ_ONLY, type ToolRegistry } from './define.js';
import type { ToolContext } from './context.js';

/** src/code and its report shapes, loaded by the first call (and kept: an import() of a loaded module still goes
 * through the loader, ~0.3 ms a call). */
let loaded: Promise<[typeof import('../code/index.js'), typeof import('../code/report.js')]> | undefined;
const loadCode = () => (loaded ??= Promise.all([import('../code/index.js'), import('../code/report.js')]));

/**
 * loadCode() started while the file is read: a first call's imports (~6 ms) overlap the read's I/O. A refused read
 * leaves it loaded for the next call, its failure (none expected: our own modules) for the await that takes it.
 */
function readingCode(): ReturnType<typeof loadCode> {
  const loading = loadCode();
  loading.catch(() => {});
  return loading;
}

/** How a call reads a file: its path names the document (incremental re-parse), and the store answers what was listed
 * before. */
function parseOptions(
  code: Awaited<ReturnType<typeof loadCode>>[0],
  ctx: ToolContext,
  path: string,
  signal: AbortSignal,
  bytes: Uint8Array,
) {
  return {
    document: path,
    bytes,
    store: ctx.config.codeCache ? code.definitionStoreIn(ctx.config.dataDir) : undefined,
    signal,
  };
}

const syntaxErrorsShape = z
  .object({
    count: z.number().describe('0 for a clean parse'),
    first_lines: z.array(z.number()),
  })
  .describe('Where the file failed to parse; only what parsed is answered');

const noteShape = z.string().optional();

const fileArgument = z.string().describe('Absolute path or file:// URI of a source file');

export function registerCodeTools(tools: ToolRegistry, ctx: ToolContext): void {
  tools.register(
    {
      name: 'fault_list_function_names',
      toolset: 'code',
      title: 'List function names',
      description:
        'Lists every function-like definition in a source file in source order (functions, methods, constructors, ' +
        'nested and named arrow functions), parsed locally with ' +
        'tree-sitter (no LLM). Python, JavaScript, TypeScript, TSX, ' +
        'Go, Rust, Java, Ruby, C, C++, C#, PHP, by extension. Text: a ' +
        'JSON array of the names. Structured: each with its ' +
        'qualified name (Class.method, Type::method), kind and 1-based lines.',
      input: { file: fileArgument },
      output: {
        names: z.array(z.string()),
        functions: z.array(
          z.object({
            name: z.string(),
            qualified_name: z.string().describe('func for fault_extract_code_block when a name is ambiguous'),
            kind: z.enum(['function', 'method', 'constructor']),
            start_line: z.number().describe('1-based, decorators and doc comments included'),
            end_line: z.number(),
          }),
        ),
        language: z.string(),
        syntax_errors: syntaxErrorsShape,
        note: noteShape,
      },
      annotations: LOCAL_READ_ONLY,
    },
    async ({ file }, { signal }) => {
      const loading = readingCode();
      const source = await ctx.access.readSourceFile(file, 'file');
      const [code, { functionListReport }] = await loading;
      const language = code.requireLanguageForPath(source.path, source.text);
      const report = functionListReport(
        await code.listFunctions(source.text, language, parseOptions(code, ctx, source.path, signal, source.bytes)),
      );
      return { text: JSON.stringify(report.names), structured: report };
    },
  );

  tools.register(
    {
      name: 'fault_extract_code_block',
      toolset: 'code',
      title: 'Extract a function',
      description:
        'Returns one function of a file: `full`, the whole definition ' +
        'with decorators, doc comments and export; `body`, ' +
        'the block alone, indentation kept (null without one). Local tree-sitter (no LLM), same languages as ' +
        'fault_list_function_names. An ambiguous or missing name is an error listing the candidates.',
      input: {
        file: fileArgument,
        func: z.string().describe('Function name: bare, qualified (Class.method, Type::method), or with :LINE'),
      },
      output: {
        full: z.string(),
        body: z.string().nullable(),
        name: z.string(),
        qualified_name: z.string(),
        kind: z.enum(['function', 'method', 'constructor']),
        language: z.string(),
        start_line: z.number().describe('1-based, of full'),
        end_line: z.number(),
        syntax_errors: syntaxErrorsShape,
        note: noteShape,
      },
      annotations: LOCAL_READ_ONLY,
    },
    async ({ file, func }, { signal }) => {
      const loading = readingCode();
      const source = await ctx.access.readSourceFile(file, 'file');
      const [code, { extractionReport }] = await loading;
      const language = code.requireLanguageForPath(source.path, source.text);
      const report = extractionReport(
        await code.extractFunction(
          source.text,
          language,
          func,
          parseOptions(code, ctx, source.path, signal, source.bytes),
        ),
      );
      return { text: JSON.stringify({ full: report.full, body: report.body }), structured: report };
    },
  );
}
