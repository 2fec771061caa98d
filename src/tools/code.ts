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

/** src/code and its report shapes, loaded by the first call. */
const loadCode = () => Promise.all([import('../code/index.js'), import('../code/report.js')]);

/** How a call reads a file: its path names the document (incremental re-parse), and the store answers what was listed before. */
function parseOptions(code: Awaited<ReturnType<typeof loadCode>>[0], ctx: ToolContext, path: string) {
  return { document: path, store: ctx.config.codeCache ? code.definitionStoreIn(ctx.config.dataDir) : undefined };
}

const syntaxErrorsShape = z
  .object({
    count: z.number().describe('ERROR and MISSING nodes tree-sitter produced; 0 for a clean parse'),
    first_lines: z.array(z.number()).describe('1-based lines where the first few errors start'),
  })
  .describe('Where the file failed to parse; the answer then covers only the parts that parsed');

const noteShape = z.string().optional().describe('Present when the file has syntax errors');

const fileArgument = z.string().describe('Absolute path or file:// URI of a source file (see the description for languages)');

export function registerCodeTools(tools: ToolRegistry, ctx: ToolContext): void {
  tools.register(
    {
      name: 'fault_list_function_names',
      toolset: 'code',
      title: 'List function names',
      description:
        'Lists every function-like definition in a source file, in source order: functions, methods, ' +
        'constructors, nested functions, and arrow/function expressions bound to a name. Parses locally with ' +
        'tree-sitter (no LLM). Languages: Python, JavaScript, TypeScript, TSX, Go, Rust, Java, Ruby, C, C++, C#, PHP ' +
        '(by file extension; a .h header whose text is C++ is C++). Text: a JSON array of the bare names. Structured: each function with its qualified ' +
        'name (Class.method, Go Receiver.Method, Rust Type::method), kind and 1-based start/end lines.',
      input: { file: fileArgument },
      output: {
        names: z.array(z.string()).describe('Bare names in source order (duplicates kept)'),
        functions: z.array(
          z.object({
            name: z.string(),
            qualified_name: z.string().describe('Pass this as func to fault_extract_code_block when a name is ambiguous'),
            kind: z.enum(['function', 'method', 'constructor']),
            start_line: z.number().describe('1-based, including decorators, annotations, attributes, doc comments'),
            end_line: z.number().describe('1-based, inclusive'),
          }),
        ),
        language: z.string(),
        syntax_errors: syntaxErrorsShape,
        note: noteShape,
      },
      annotations: LOCAL_READ_ONLY,
    },
    async ({ file }) => {
      const source = await ctx.access.readSourceFile(file, 'file');
      const [code, { functionListReport }] = await loadCode();
      const language = code.requireLanguageForPath(source.path, source.text);
      const report = functionListReport(await code.listFunctions(source.text, language, parseOptions(code, ctx, source.path)));
      return { text: JSON.stringify(report.names), structured: report };
    },
  );

  tools.register(
    {
      name: 'fault_extract_code_block',
      toolset: 'code',
      title: 'Extract a function',
      description:
        'Returns the source of one function from a file: `full` is the whole definition including decorators, ' +
        'annotations, attributes, doc comments and the export wrapper; `body` is the block alone with its original ' +
        'indentation (null for a declaration without one). Parses locally with tree-sitter (no LLM); same languages ' +
        'as fault_list_function_names. `func` is a bare name (run), a qualified name (Server.run, Type::run) or ' +
        'either with :LINE (size:26) to pick one of several overloads. A name matching several definitions is an ' +
        'error listing the qualified candidates; a missing name is an error listing the names that exist.',
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
        start_line: z.number().describe('1-based first line of full'),
        end_line: z.number().describe('1-based last line of full, inclusive'),
        syntax_errors: syntaxErrorsShape,
        note: noteShape,
      },
      annotations: LOCAL_READ_ONLY,
    },
    async ({ file, func }) => {
      const source = await ctx.access.readSourceFile(file, 'file');
      const [code, { extractionReport }] = await loadCode();
      const language = code.requireLanguageForPath(source.path, source.text);
      const report = extractionReport(await code.extractFunction(source.text, language, func, parseOptions(code, ctx, source.path)));
      return { text: JSON.stringify({ full: report.full, body: report.body }), structured: report };
    },
  );
}
