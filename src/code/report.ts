/**
 * The JSON shapes faultline shows people and agents for code results (snake_case, like the rest
 * of fault's tool output): one place, so `faultline code …` prints exactly what the MCP tools
 * return as structuredContent.
 */
import type { ExtractedFunction, FunctionList, SyntaxErrorSummary } from './index.js';

export interface SyntaxErrorReport {
  syntax_errors: { count: number; first_lines: number[] };
  /** Present only when the file has syntax errors. */
  note?: string;
}

export interface FunctionListReport extends SyntaxErrorReport {
  names: string[];
  functions: {
    name: string;
    qualified_name: string;
    kind: ExtractedFunction['kind'];
    start_line: number;
    end_line: number;
  }[];
  language: string;
}

export interface ExtractionReport extends SyntaxErrorReport {
  full: string;
  body: string | null;
  name: string;
  qualified_name: string;
  kind: ExtractedFunction['kind'];
  language: string;
  start_line: number;
  end_line: number;
}

export function functionListReport(list: FunctionList): FunctionListReport {
  return {
    names: list.definitions.map((definition) => definition.name),
    functions: list.definitions.map((definition) => ({
      name: definition.name,
      qualified_name: definition.qualifiedName,
      kind: definition.kind,
      start_line: definition.startLine,
      end_line: definition.endLine,
    })),
    language: list.language,
    ...syntaxErrorReport(list.syntaxErrors),
  };
}

export function extractionReport(extracted: ExtractedFunction): ExtractionReport {
  return {
    full: extracted.full,
    body: extracted.body,
    name: extracted.name,
    qualified_name: extracted.qualifiedName,
    kind: extracted.kind,
    language: extracted.language,
    start_line: extracted.startLine,
    end_line: extracted.endLine,
    ...syntaxErrorReport(extracted.syntaxErrors),
  };
}

function syntaxErrorReport(summary: SyntaxErrorSummary): SyntaxErrorReport {
  const syntax_errors = { count: summary.count, first_lines: summary.firstLines };
  if (summary.count === 0) return { syntax_errors };
  return {
    syntax_errors,
    note:
      `the file has ${summary.count} syntax error(s), first at line(s) ${summary.firstLines.join(', ')}; ` +
      'the answer covers only the definitions tree-sitter could still recognise',
  };
}
