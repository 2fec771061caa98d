/**
 * `faultline code list FILE` and `faultline code extract FILE FUNC`: the code tools without an
 * MCP client. They print exactly the tools' structuredContent as JSON on stdout.
 */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { FileAccess } from '../access.js';
import {
  definitionStoreIn,
  extractFunction,
  listFunctions,
  requireLanguageForPath,
  supportedExtensions,
  type ParseOptions,
} from '../code/index.js';
import { extractionReport, functionListReport } from '../code/report.js';
import { defaultCodeCache, defaultDataDir } from '../config.js';
import { runCommand } from './run-command.js';
import { compileWasmForOneShot } from './wasm-tiers.js';
import { type GlobalOptions } from './flags.js';

export function registerCodeCommand(program: Command, _globals: () => GlobalOptions): void {
  const code = program
    .command('code')
    .summary('list and extract functions with tree-sitter (JSON out)')
    .description(
      'Read source files the way the fault_list_function_names and fault_extract_code_block tools do,\n' +
        `locally and without an LLM. Supported extensions: ${supportedExtensions().join(' ')}`,
    );

  code
    .command('list')
    .argument('<file>', 'source file (a relative path is taken from the current directory)')
    .summary('print the functions of FILE as JSON')
    .description(
      'Print every function-like definition of FILE in source order, as JSON: names, and for each function\n' +
        'its qualified name, kind and 1-based start/end lines, plus a syntax-error summary.',
    )
    .addHelpText(
      'after',
      '\nExamples:\n  faultline code list src/server.py\n  faultline ' +
        'code list ./main.go | jq -r ".functions[].qualified_name"',
    )
    .action((file: string) =>
      runCommand(async () => {
        compileWasmForOneShot();
        const source = await readSource(file);
        const report = functionListReport(
          await listFunctions(source.text, requireLanguageForPath(source.path, source.text), parseOptions()),
        );
        process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      }),
    );

  code
    .command('extract')
    .argument('<file>', 'source file (a relative path is taken from the current directory)')
    .argument('<func>', 'function name: bare (run), qualified (Server.run, Type::run), or with :LINE (size:26)')
    .summary('print one function of FILE as JSON')
    .description(
      'Print one function of FILE as JSON: `full` (with decorators, annotations, attributes, doc comments,\n' +
        '`export`) and `body` (the block alone, original indentation), with its qualified name and lines.\n' +
        'A name matching several definitions is an error listing the qualified candidates (exit code 2).',
    )
    .addHelpText(
      'after',
      '\nExamples:\n  faultline code extract app.py Greeter.greet\n  ' +
        'faultline code extract lib.rs "Point::new" | jq -r .full',
    )
    .action((file: string, func: string) =>
      runCommand(async () => {
        compileWasmForOneShot();
        const source = await readSource(file);
        const report = extractionReport(
          await extractFunction(source.text, requireLanguageForPath(source.path, source.text), func, parseOptions()),
        );
        process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      }),
    );
}

/** The definition store of the data directory, as the MCP tools use it, unless FAULTLINE_CODE_CACHE is off. */
function parseOptions(): ParseOptions {
  return defaultCodeCache() ? { store: definitionStoreIn(defaultDataDir()) } : {};
}

/**
 * A person on a terminal means paths relative to where they are; the file checks are FileAccess's.
 * A name no grammar parses is refused by its extension first: FileAccess's refusal of it would point
 * at --root, which these commands have no use for (inside roots it is still no source file).
 */
async function readSource(file: string) {
  const path = file.startsWith('file://') ? file : resolve(file);
  // A directory has no extension to judge: FileAccess says what it is and what to pass instead.
  const directory = await stat(path).then(
    (info) => info.isDirectory(),
    () => false,
  );
  if (!directory) requireLanguageForPath(path);
  return new FileAccess().readSourceFile(path, 'file');
}
