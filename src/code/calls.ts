/**
 * The calls a source file makes and the environment variables it reads, from its tree-sitter
 * tree: what a reader needs to tell which services a program talks to and where their addresses
 * come from. For each call: the callee as written (`httpx.AsyncClient`, `redis.NewClient`), its
 * line, and its arguments (keyword or object-literal keys flattened in: `base_url=…`, `{url: …}`,
 * `&redis.Options{Addr: …}`), each with its string value when it is a plain string literal and
 * the names it refers to (`WEATHER_URL`, `settings.redis_url`, f-string and template
 * interpolations). For each environment read (os.getenv, os.environ[…], process.env.X, os.Getenv,
 * ENV[…], System.getenv): the variable, its fallback when one is written beside it, and the name
 * it is assigned to.
 *
 * Python, JavaScript, TypeScript/TSX, Go, Java and Ruby; other languages give nothing.
 */
import type { Node } from 'web-tree-sitter';
import { withTree } from './grammar.js';
import { languageByName, type LanguageInfo } from './languages.js';

export interface CallArgument {
  /** The keyword or key it was given under, if any. */
  name?: string;
  text: string;
  /** The value of a plain string literal (an interpolated one gives its literal parts, with {…} for each hole). */
  literal?: string;
  /** Identifiers and dotted names it mentions. */
  refs: string[];
}

export interface CallSite {
  callee: string;
  line: number;
  arguments: CallArgument[];
  /** The variable or key the call's result is assigned to, if any. */
  assignedTo?: string;
}

export interface EnvRead {
  name: string;
  fallback?: string;
  line: number;
  assignedTo?: string;
}

export interface CallReport {
  calls: CallSite[];
  envReads: EnvRead[];
  /** Simple assignments of a string literal or a whole number to a name (`WEATHER_URL = "http://…"`, `PORT = 8100`). */
  constants: Array<{ name: string; value: string; line: number }>;
}

const CALLS: Record<string, readonly string[]> = {
  python: ['call'],
  javascript: ['call_expression', 'new_expression'],
  typescript: ['call_expression', 'new_expression'],
  tsx: ['call_expression', 'new_expression'],
  go: ['call_expression'],
  java: ['method_invocation', 'object_creation_expression'],
  ruby: ['call'],
};
const STRINGS = new Set([
  'string',
  'string_literal',
  'interpreted_string_literal',
  'raw_string_literal',
  'template_string',
  'string_fragment',
]);
const PAIRS = new Set(['keyword_argument', 'pair', 'keyed_element']);
const ASSIGNMENTS = new Set([
  'assignment',
  'variable_declarator',
  'assignment_expression',
  'short_var_declaration',
  'var_spec',
  'const_spec',
  'pair',
  'keyword_argument',
  'keyed_element',
  'local_variable_declaration',
  'field_declaration',
]);
/** Where a name takes a literal value: Python, JS, Go (`const`, `port = "8080"`, `port := "8080"`). */
const CONSTANT_ASSIGNMENTS = new Set([
  'assignment',
  'variable_declarator',
  'const_spec',
  'assignment_statement',
  'short_var_declaration',
]);
const ENV_CALLS = new Set([
  'os.getenv',
  'os.environ.get',
  'os.Getenv',
  'os.LookupEnv',
  'System.getenv',
  'ENV.fetch',
  'Deno.env.get',
]);
/**
 * An app's own helper reading a variable with its fallback, as most codebases write one:
 * `getEnv("PORT", "8080")`, `env_or("PORT", 8080)`, `getEnvOrDefault(…)` (Go, Java, Python, JS alike).
 */
const ENV_HELPER = /(^|\.)(get_?env|env_?or|get_?env_?or(_?default|_?else)?|getenv_?default|env_?or_?default)$/i;
/** Bounds: a file of this many nodes is read no further. */
const MAX_NODES = 500_000;
const MAX_TEXT = 300;

export async function listCalls(source: string, language: LanguageInfo | string): Promise<CallReport> {
  const info = typeof language === 'string' ? languageByName(language) : language;
  const types = info ? CALLS[info.name] : undefined;
  if (!info || !types) return { calls: [], envReads: [], constants: [] };
  return withTree(source, info, (tree) => collect(tree.rootNode, new Set(types)));
}

function collect(root: Node, callTypes: ReadonlySet<string>): CallReport {
  const report: CallReport = { calls: [], envReads: [], constants: [] };
  const stack: Node[] = [root];
  let seen = 0;
  while (stack.length > 0 && seen++ < MAX_NODES) {
    const node = stack.pop()!;
    if (callTypes.has(node.type)) readCall(node, report);
    else if (
      node.type === 'subscript' ||
      node.type === 'subscript_expression' ||
      node.type === 'element_reference' ||
      node.type === 'index_expression'
    )
      readEnvSubscript(node, report);
    else if (node.type === 'member_expression') readEnvMember(node, report);
    else if (CONSTANT_ASSIGNMENTS.has(node.type)) readConstant(node, report);
    for (let i = node.namedChildCount - 1; i >= 0; i--) stack.push(node.namedChild(i)!);
  }
  return report;
}

function clip(text: string): string {
  const compact = text.replace(/\s+/g, ' ');
  return compact.length > MAX_TEXT ? `${compact.slice(0, MAX_TEXT)}…` : compact;
}

function calleeOf(node: Node): string | undefined {
  const callee =
    node.childForFieldName('function') ??
    node.childForFieldName('constructor') ??
    node.childForFieldName('type') ??
    (node.type === 'method_invocation' || node.type === 'call' ? null : null);
  if (callee) return clip(callee.text).replace(/\s/g, '');
  // Java and Ruby name the method apart from its receiver.
  const method = node.childForFieldName('name') ?? node.childForFieldName('method');
  if (!method) return undefined;
  const receiver = node.childForFieldName('object') ?? node.childForFieldName('receiver');
  return `${receiver ? `${clip(receiver.text)}.` : ''}${method.text}`.replace(/\s/g, '');
}

function readCall(node: Node, report: CallReport): void {
  const callee = calleeOf(node);
  if (!callee) return;
  const argsNode = node.childForFieldName('arguments');
  const args: CallArgument[] = [];
  for (const child of argsNode?.namedChildren ?? []) {
    if (!child || child.type === 'comment') continue;
    if (PAIRS.has(child.type)) args.push(pairArgument(child));
    else {
      args.push(valueArgument(child));
      // Keys of an object or struct literal argument are read as named arguments too.
      for (const pair of descendantsOfTypes(child, PAIRS, 4)) args.push(pairArgument(pair));
    }
  }
  const line = node.startPosition.row + 1;
  const assignedTo = assignedName(node);
  report.calls.push({ callee, line, arguments: args, ...(assignedTo ? { assignedTo } : {}) });
  if ((ENV_CALLS.has(callee) || ENV_HELPER.test(callee)) && args[0]?.literal !== undefined) {
    // The fallback as written: a string, or a number (`os.environ.get("PORT", 8100)`).
    const fallback = args[1]?.literal ?? (/^\d{1,6}$/.test(args[1]?.text ?? '') ? args[1]!.text : besideFallback(node));
    report.envReads.push({
      name: args[0].literal,
      line,
      ...(fallback !== undefined ? { fallback } : {}),
      ...(assignedTo ? { assignedTo } : {}),
    });
  }
}

function pairArgument(pair: Node): CallArgument {
  const key = pair.childForFieldName('name') ?? pair.childForFieldName('key') ?? pair.namedChild(0);
  const value = pair.childForFieldName('value') ?? pair.namedChild(pair.namedChildCount - 1);
  const argument = value ? valueArgument(value) : { text: '', refs: [] };
  const name = key ? key.text.replace(/^["']|["']$/g, '').replace(/:$/, '') : undefined;
  return { ...argument, ...(name ? { name } : {}) };
}

function valueArgument(node: Node): CallArgument {
  const literal = literalOf(node);
  return { text: clip(node.text), ...(literal !== undefined ? { literal } : {}), refs: refsOf(node) };
}

/** A string literal's value: its content without quotes; interpolations ({x}, ${x}) kept as {…}. */
function literalOf(node: Node): string | undefined {
  let target: Node | null = node;
  // A Go struct's literal_element, a parenthesised string: look through one wrapper.
  if (target && !STRINGS.has(target.type) && target.namedChildCount === 1) target = target.namedChild(0);
  if (!target || !STRINGS.has(target.type)) return undefined;
  const text = target.text;
  const unquoted = text.replace(/^[rbfuRBFU]{0,2}(?:"""|'''|["'`])/, '').replace(/(?:"""|'''|["'`])$/, '');
  return unquoted
    .replace(/\$\{[^}]*\}/g, '{…}')
    .replace(/\{[^}]*\}/g, (hole) => (/^[{][A-Za-z_][\w.]*[}]$/.test(hole) || hole === '{…}' ? '{…}' : hole));
}

/** A string literal's value, or a whole number's digits (`8090` in `process.env.PORT || 8090`). */
function scalarOf(node: Node): string | undefined {
  const literal = literalOf(node);
  if (literal !== undefined) return literal;
  const single = node.namedChildCount === 1 ? node.namedChild(0) : node;
  const text = (single ?? node).text.trim();
  return /^\d{1,6}$/.test(text) ? text : undefined;
}

function refsOf(node: Node): string[] {
  const refs = new Set<string>();
  const stack: Node[] = [node];
  let seen = 0;
  while (stack.length > 0 && seen++ < 2000) {
    const current = stack.pop()!;
    if (
      current.type === 'attribute' ||
      current.type === 'member_expression' ||
      current.type === 'selector_expression' ||
      current.type === 'field_access'
    ) {
      refs.add(current.text.replace(/\s/g, ''));
      continue;
    }
    if (current.type === 'identifier' || current.type === 'constant') refs.add(current.text);
    for (const child of current.namedChildren) if (child) stack.push(child);
  }
  return [...refs].slice(0, 20);
}

function* descendantsOfTypes(node: Node, types: ReadonlySet<string>, depth: number): Generator<Node> {
  if (depth === 0) return;
  for (const child of node.namedChildren) {
    if (!child) continue;
    if (types.has(child.type)) yield child;
    else yield* descendantsOfTypes(child, types, depth - 1);
  }
}

/** The name a value ends up in: the left side of its assignment, or its key, through a few wrappers (await, `or`,
 * `??`). */
function assignedName(node: Node): string | undefined {
  let current: Node | null = node;
  for (let depth = 0; current && depth < 4; depth++) {
    const parent: Node | null = current.parent;
    if (!parent) return undefined;
    if (ASSIGNMENTS.has(parent.type)) {
      const left =
        parent.childForFieldName('left') ??
        parent.childForFieldName('name') ??
        parent.childForFieldName('key') ??
        parent.childForFieldName('declarator') ??
        parent.namedChild(0);
      if (!left || left.startIndex === current.startIndex) return undefined;
      return left.text
        .replace(/\s/g, '')
        .replace(/^["']|["']$/g, '')
        .replace(/:$/, '')
        .slice(0, 100);
    }
    current = parent;
  }
  return undefined;
}

const ENV_OBJECTS = new Set(['os.environ', 'process.env', 'ENV', 'import.meta.env']);

function readEnvSubscript(node: Node, report: CallReport): void {
  const object =
    node.childForFieldName('value') ??
    node.childForFieldName('object') ??
    node.childForFieldName('receiver') ??
    node.childForFieldName('operand') ??
    node.namedChild(0);
  if (!object || !ENV_OBJECTS.has(object.text.replace(/\s/g, ''))) return;
  const key = node.childForFieldName('subscript') ?? node.childForFieldName('index') ?? node.namedChild(1);
  const name = key ? literalOf(key) : undefined;
  if (name === undefined) return;
  pushEnvRead(node, name, report);
}

function readEnvMember(node: Node, report: CallReport): void {
  const object = node.childForFieldName('object');
  const property = node.childForFieldName('property');
  if (!object || !property || !ENV_OBJECTS.has(object.text.replace(/\s/g, ''))) return;
  pushEnvRead(node, property.text, report);
}

/** The value written beside a read as its fallback: `X or "d"`, `X ?? 8090`, `X || "d"`. */
function besideFallback(node: Node): string | undefined {
  const parent = node.parent;
  if (
    !parent ||
    (parent.type !== 'boolean_operator' && parent.type !== 'binary_expression') ||
    parent.namedChild(0)?.startIndex !== node.startIndex
  )
    return undefined;
  const right = parent.childForFieldName('right') ?? parent.namedChild(1);
  return right ? scalarOf(right) : undefined;
}

/** An env read, with a fallback written beside it: `X or "d"`, `X ?? 'd'`, `X || "d"`. */
function pushEnvRead(node: Node, name: string, report: CallReport): void {
  const fallback = besideFallback(node);
  const assignedTo = assignedName(node);
  report.envReads.push({
    name,
    line: node.startPosition.row + 1,
    ...(fallback !== undefined ? { fallback } : {}),
    ...(assignedTo ? { assignedTo } : {}),
  });
}

function readConstant(node: Node, report: CallReport): void {
  const left = node.childForFieldName('left') ?? node.childForFieldName('name');
  const right = node.childForFieldName('right') ?? node.childForFieldName('value');
  if (!left || !right) return;
  const value = scalarOf(right);
  if (value === undefined || !/^[\w.]+$/.test(left.text)) return;
  report.constants.push({ name: left.text, value, line: node.startPosition.row + 1 });
}
