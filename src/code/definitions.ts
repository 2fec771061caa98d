/**
 * Finds the definitions in a syntax tree: what the language's definitions.scm captures, turned
 * into named, qualified, located records.
 *
 * The query only says "this node is a function/class/… called X". The rest is done here, the
 * same way for every language, with a few per-language tables:
 * - qualification: the names of the enclosing captured definitions and scopes (`Class.method`,
 *   `outer.inner`, `Type::method` through a Rust impl), plus a receiver the query captured
 *   outside the node (Go `(s *Server) Start` → `Server.Start`, JS `module.exports.f = …`);
 * - kind: a function directly inside a class-like definition or scope is a method, and so is one
 *   whose name is qualified by a type outside it (C++ `int S::m() {…}`);
 * - extent: `full` grows outwards over wrappers (export, declare, decorators, templates, the
 *   declaration or statement around a bound function), backwards over attached siblings (TS
 *   method decorators, Rust attributes, doc comments, TS overload signatures of the same name)
 *   and forwards over a class member's closing `;`;
 * - body: the `body` field of the node (or of the function it binds);
 * - indentation: both spans start at the start of their first line when only indentation precedes
 *   them there, so the texts keep their original indentation.
 */
import type { Node, Tree } from 'web-tree-sitter';
import { CancelledError } from '../kernel/errors.js';
import type { Grammar } from './grammar.js';
import type { LanguageInfo } from './languages.js';

export type FunctionKind = 'function' | 'method' | 'constructor';
export type TypeKind = 'class' | 'interface' | 'struct' | 'enum' | 'trait' | 'module';
export type DefinitionKind = FunctionKind | TypeKind;

/**
 * A range of the source. Offsets are UTF-16 code-unit offsets into the source string (what
 * `String.prototype.slice` takes), not UTF-8 byte offsets; lines are 1-based and inclusive.
 */
export interface SourceSpan {
  startLine: number;
  endLine: number;
  startOffset: number;
  endOffset: number;
}

export interface Definition extends SourceSpan {
  /** The bare name as written (`method`). */
  name: string;
  /** The name qualified by its containers, joined with the language's separator (`Class.method`). */
  qualifiedName: string;
  kind: DefinitionKind;
  /** The block alone (null for a declaration without one: abstract, interface, trait signature). */
  body: SourceSpan | null;
}

const FUNCTION_KINDS: ReadonlySet<string> = new Set<FunctionKind>(['function', 'method', 'constructor']);
const CLASS_LIKE_KINDS: ReadonlySet<string> = new Set<TypeKind>(['class', 'interface', 'struct', 'enum', 'trait']);

export function isFunctionKind(kind: DefinitionKind): kind is FunctionKind {
  return FUNCTION_KINDS.has(kind);
}

/** Parent node types whose whole text belongs to the definition they wrap. */
const WRAPPERS: Readonly<Record<string, ReadonlySet<string>>> = {
  python: new Set(['decorated_definition']),
  javascript: new Set(['export_statement']),
  typescript: new Set(['export_statement', 'ambient_declaration']),
  tsx: new Set(['export_statement', 'ambient_declaration']),
  cpp: new Set(['template_declaration']),
};

/** Declarator types → the declaration types that are wholly theirs when they are its only declarator. */
const SINGLE_DECLARATIONS: Readonly<Record<string, ReadonlySet<string>>> = {
  variable_declarator: new Set([
    'lexical_declaration',
    'variable_declaration',
    'local_variable_declaration',
    'field_declaration',
  ]),
  type_spec: new Set(['type_declaration']),
  var_spec: new Set(['var_declaration']),
  // `module.exports.f = () => …;` and PHP `$f = function () {…};` are the whole statement.
  assignment_expression: new Set(['expression_statement']),
};

/**
 * Preceding sibling types that are attached to the definition after them (when adjacent). Each is
 * given the sibling's type, asked once, and the source: a comment's opening is read from the
 * source at its start (what a comment opens with is within it: a comment is at least that long).
 */
const ATTACHED_SIBLINGS: Readonly<Record<string, (node: Node, type: string, source: string) => boolean>> = {
  javascript: (node, type, source) => isDocBlock(node, type, 'comment', source),
  typescript: (node, type, source) => type === 'decorator' || isDocBlock(node, type, 'comment', source),
  tsx: (node, type, source) => type === 'decorator' || isDocBlock(node, type, 'comment', source),
  java: (node, type, source) => isDocBlock(node, type, 'block_comment', source),
  php: (node, type, source) => isDocBlock(node, type, 'comment', source),
  csharp: (node, type, source) => type === 'comment' && opensWith(DOC_LINE, node, source),
  go: (_node, type) => type === 'comment',
  rust: (node, type, source) =>
    type === 'attribute_item' ||
    ((type === 'line_comment' || type === 'block_comment') && opensWith(RUST_DOC, node, source)),
};

/** A doc comment opened with slash-star-star (JSDoc, Javadoc, PHPDoc); plain block comments are not attached. */
function isDocBlock(node: Node, type: string, commentType: string, source: string): boolean {
  return type === commentType && opensWith(DOC_BLOCK, node, source);
}

/** Whether the source at `node`'s start matches `opening` (a sticky pattern). */
function opensWith(opening: RegExp, node: Node, source: string): boolean {
  opening.lastIndex = node.startIndex;
  return opening.test(source);
}

const DOC_BLOCK = /\/\*\*(?!\/)/y;
const DOC_LINE = /\/\/\/(?!\/)/y;
const RUST_DOC = /\/\/\/(?!\/)|\/\*\*(?!\/)/y;

/** Bodiless signatures folded into a following implementation of the same name (overloads). */
const OVERLOAD_SIGNATURES: ReadonlySet<string> = new Set(['function_signature', 'method_signature']);

interface Captured {
  node: Node;
  /** Where the node ends: asked of tree-sitter once, since every enclosure test needs it. */
  end: number;
  /** A kind, or 'scope' for a container that is not itself listed. */
  role: DefinitionKind | 'scope';
  name: string;
  /** Qualifier segments from the name itself (`A::f`) or from a receiver. */
  ownQualifier: string[];
  /** A member assigned on `this` (`this._cb = () => …`): it belongs to the class, not the method. */
  onThis?: boolean;
  /** The name itself is qualified (C++ `int S::m() {…}`, defined outside the class or namespace it names). */
  qualifiedName?: boolean;
}

/**
 * Definitions nested in more than MAX_NESTING others, or starting deeper than MAX_TREE_DEPTH in
 * the syntax tree, are left out. Real code stays far below both; the limits keep a pathological
 * file (thousands of functions nested in each other, or inside thousands of brackets) from
 * costing time and output that grow with the square of its depth: tree-sitter finds a node's
 * parent or sibling by walking down from the root.
 */
export const MAX_NESTING = 64;
export const MAX_TREE_DEPTH = 400;

/**
 * What the passes after the query share. Every question asked of a web-tree-sitter node (its type,
 * end, parent, siblings, fields) is a call into WASM that marshals the node and often builds a new
 * JS Node: ~1-3 µs each, a dozen per definition, so on a 20,000-line file (6,000 definitions) they
 * cost more than the query did. What the source text can answer instead is read from it: rows come
 * from a line index, a plain identifier's name from the text, and a question whose answer the
 * text rules out (no `;` after the node, no comment marker before its block, a blank line above
 * it, a bracket before it where a wrapper's keyword would be) is not asked. test/code-text-checks
 * holds the edge cases; the outputs were compared with the asking version's on ~8,700 real files.
 */
interface Context {
  info: LanguageInfo;
  source: string;
  lines: LineIndex;
  /** Whether the grammar has overload signatures at all (only TypeScript's does). */
  hasSignatures: boolean;
  /** Whether the grammar has bodies outside a `body` field (UNFIELDED_BODIES: C#'s and Kotlin's do). */
  hasExpressionBodies: boolean;
  /** Whether the grammar has expression lists (Go, Python, Lua), through which a function can be bound. */
  hasExpressionLists: boolean;
  /**
   * Per declaration (its node id, then the declarator type): whether it declares one name of that
   * type. Asked once per declaration, not once per declarator: a `var` of 30 functions would
   * otherwise list its children 30 times.
   */
  soleDeclarations: Map<string, boolean>;
}

/** `cancelled`, asked while the query runs, stops it when it answers true (a CancelledError). */
export function findDefinitions(
  tree: Tree,
  grammar: Grammar,
  info: LanguageInfo,
  source: string,
  cancelled?: () => boolean,
): Definition[] {
  const context: Context = {
    info,
    source,
    lines: new LineIndex(source),
    hasSignatures: hasSignatureTypes(grammar),
    hasExpressionBodies: grammar.language.types.some((type) => UNFIELDED_BODIES.has(type)),
    hasExpressionLists: grammar.language.types.includes('expression_list'),
    soleDeclarations: new Map(),
  };
  const definitions: Definition[] = [];
  // Functions whose own name is qualified (`S::m`), with that qualifier: methods unless it is a namespace.
  const qualifiedOutside: { definition: Definition; qualifier: string[] }[] = [];
  // The captured definitions and scopes enclosing the current entry, outermost first. Entries come
  // in source order, outer before inner, so enclosure is decided by offsets alone: asking
  // tree-sitter for a node's parent walks down from the root each time.
  const open: Captured[] = [];
  // The qualified name of each open container, as segments: what a definition inside it is qualified by.
  const openPaths: string[][] = [];
  for (const entry of captureDefinitions(tree, grammar, info, source, cancelled)) {
    while (open.length > 0 && !encloses(open[open.length - 1]!, entry)) {
      open.pop();
      openPaths.pop();
    }
    if (open.length >= MAX_NESTING) continue;
    const nearest = open[open.length - 1];
    // A container's own qualifier counts too: `h` inside Go's `func (s *Server) Start` is `Server.Start.h`.
    // A member assigned on `this` is qualified by the class around the method (`Command._exitCallback`),
    // or by the constructor function that assigns it when no class encloses it (`Point.x`); what is
    // defined inside such a member is qualified by the member's name (`Command.Help.render`).
    const ownerDepth = entry.onThis ? thisOwnerDepth(open) : open.length;
    const owners = entry.onThis ? open.slice(0, ownerDepth) : open;
    const outer = ownerDepth > 0 ? openPaths[ownerDepth - 1]! : [];
    const qualifier = [...outer, ...entry.ownQualifier];
    open.push(entry);
    openPaths.push([...qualifier, entry.name]);
    if (entry.role === 'scope') continue;
    let kind: DefinitionKind = entry.role;
    // A function directly inside a class-like definition or scope is a method; inside a module
    // or namespace it is still a function.
    const owner = entry.onThis ? owners[owners.length - 1] : nearest;
    const insideType = owner !== undefined && (owner.role === 'scope' || CLASS_LIKE_KINDS.has(owner.role));
    if (kind === 'function' && insideType) kind = 'method';
    const full = fullNode(entry, context);
    const exported = splitExport(full, context);
    const body = bodyNode(entry.node, context);
    const start = attachedStart(exported ?? full, entry, body !== undefined, context) ?? (exported ?? full).node;
    const bodyEnd = body?.endIndex ?? 0;
    const bodyStart = body ? leadingComments(body, entry, context) : undefined;
    const definition: Definition = {
      name: entry.name,
      qualifiedName: joinQualified([...qualifier, entry.name], info.separator),
      kind,
      ...withIndentation(span(start.startIndex, start.startPosition.row, endOf(full, context), context), source),
      body: body
        ? withIndentation(
            span((bodyStart ?? body).startIndex, (bodyStart ?? body).startPosition.row, bodyEnd, context),
            source,
          )
        : null,
    };
    definitions.push(definition);
    if (entry.qualifiedName && kind === 'function') qualifiedOutside.push({ definition, qualifier });
  }
  if (qualifiedOutside.length > 0) markMethodsDefinedOutside(definitions, qualifiedOutside, info.separator);
  return dropFoldedSignatures(definitions);
}

/**
 * A function whose name is qualified (C++ `int S::m() {…}`, defined outside its class) is a method
 * of the type it names, unless what it names is a namespace this file defines (`int net::f() {…}`
 * after `namespace net {…}`: a function of that namespace). A namespace defined elsewhere cannot
 * be told from a class by the syntax; the type is the likelier reading out of a class's own file.
 */
function markMethodsDefinedOutside(
  definitions: Definition[],
  qualifiedOutside: { definition: Definition; qualifier: string[] }[],
  separator: string,
): void {
  const namespaces = new Set<string>();
  const namespaceNames = new Set<string>();
  for (const definition of definitions) {
    if (definition.kind !== 'module') continue;
    namespaces.add(definition.qualifiedName);
    namespaceNames.add(definition.name);
  }
  for (const { definition, qualifier } of qualifiedOutside) {
    const named = qualifier[qualifier.length - 1]!;
    if (!namespaces.has(qualifier.join(separator)) && !namespaceNames.has(named)) definition.kind = 'method';
  }
}

/**
 * A qualified name from its segments: joined with the separator, except before a computed member
 * key, which reads as it is written after its object (`C[Symbol.iterator]`, `o[key]`).
 */
function joinQualified(segments: string[], separator: string): string {
  let joined = segments[0] ?? '';
  for (let index = 1; index < segments.length; index++) {
    const segment = segments[index]!;
    joined += segment.startsWith('[') ? segment : separator + segment;
  }
  return joined;
}

function encloses(outer: Captured, inner: Captured): boolean {
  return outer.node.startIndex <= inner.node.startIndex && inner.end <= outer.end;
}

function captureDefinitions(
  tree: Tree,
  grammar: Grammar,
  info: LanguageInfo,
  source: string,
  cancelled?: () => boolean,
): Captured[] {
  // A slice of the source: a node's own `text` reads through the parser's input callback.
  const text: NodeText = Object.assign((node: Node): string => source.slice(node.startIndex, node.endIndex), {
    source,
  });
  const byNodeId = new Map<number, Captured>();
  const matches = grammar.definitionsQuery.matches(tree.rootNode, {
    maxStartDepth: MAX_TREE_DEPTH,
    // The query stops when the callback answers true (its typing says void); what it found is then partial.
    ...(cancelled && { progressCallback: cancelled as () => void }),
  });
  if (cancelled?.()) throw new CancelledError();
  for (const match of matches) {
    let node: Node | undefined;
    let role: Captured['role'] | undefined;
    let nameNode: Node | undefined;
    let receiver: Node | undefined;
    for (const capture of match.captures) {
      if (capture.name === 'name') nameNode = capture.node;
      else if (capture.name === 'receiver') receiver = capture.node;
      else if (capture.name === 'scope') [node, role] = [capture.node, 'scope'];
      else if (capture.name.startsWith('definition.'))
        [node, role] = [capture.node, capture.name.slice(11) as DefinitionKind];
    }
    if (!node || !role) continue;
    // A pattern may name its name and receiver by a path from the definition's node instead of
    // capturing them (cheaper to compile; see grammars/python/definitions.scm). A path that
    // leads nowhere means the pattern does not apply, as a capture that cannot match would.
    // Alternatives (`a|b`) are tried in order; the receiver path at the same place goes with the name's.
    const paths = match.setProperties;
    // The children the paths of this match have looked up: alternatives and the receiver's path
    // share their first steps (`left:member_expression/property` and `left:member_expression/object`).
    const lookups = paths ? new Map<string, Lookup>() : undefined;
    let chosen = 0;
    if (paths?.name && !nameNode) {
      // An empty alternative accepts a definition without a name (the module's `default`).
      const alternatives = alternativesOf(paths.name);
      let anonymous = false;
      for (chosen = 0; chosen < alternatives.length && !nameNode && !anonymous; chosen++) {
        if (alternatives[chosen] === '') anonymous = true;
        else nameNode = followPath(node, alternatives[chosen]!, lookups);
      }
      if (!nameNode && !anonymous) continue;
      chosen--;
      // A path ending at a C++ qualified name as the whole declarator: a conversion operator
      // (`S::operator int() {…}`), or error recovery (`MACRO namespace NAME {…}`), not a definition.
      if (
        nameNode &&
        alternatives[chosen]!.endsWith(':qualified_identifier') &&
        !CONVERSION_OPERATOR.test(text(nameNode))
      )
        continue;
    }
    if (paths?.receiver && !receiver) {
      const receiverPath = alternativesOf(paths.receiver)[chosen];
      if (receiverPath) {
        receiver = followPath(node, receiverPath, lookups);
        if (!receiver) continue;
      }
    }
    const existing = byNodeId.get(node.id);
    // A node matched by a general pattern and a specific one (a JS `constructor` method) keeps
    // the specific kind, whichever order the matches arrive in.
    if (existing && !(existing.role === 'function' && role === 'constructor')) continue;
    const { name, qualifier } = splitName(nameNode, info, text);
    // An empty name is error recovery's (a zero-width MISSING identifier, C++ `enum : unsigned {…}`
    // read with one): nothing a caller could name, as a definition without a name node is not.
    if (name === '') continue;
    if (receiver && TEXT_CHECKED_LANGUAGES.has(info.name)) receiver = unwrappedReceiver(receiver);
    const onThis = receiver?.type === 'this';
    const ownQualifier = receiver && !onThis ? [receiverName(text(receiver), info), ...qualifier] : qualifier;
    byNodeId.set(node.id, {
      node,
      end: node.endIndex,
      role,
      name,
      ownQualifier,
      ...(onThis ? { onThis } : {}),
      ...(qualifier.length > 0 ? { qualifiedName: true } : {}),
    });
  }
  return [...byNodeId.values()].sort((a, b) => a.node.startIndex - b.node.startIndex || b.end - a.end);
}

/** Expressions that only wrap the object a member is assigned on: `(payload as Ctx).f = …` is `payload.f`. */
const RECEIVER_WRAPPERS: ReadonlySet<string> = new Set([
  'parenthesized_expression',
  'as_expression',
  'satisfies_expression',
  'non_null_expression',
]);

function unwrappedReceiver(receiver: Node): Node {
  let inner = receiver;
  for (let depth = 0; depth < 8 && RECEIVER_WRAPPERS.has(inner.type); depth++) {
    const child = inner.namedChild(0);
    if (!child) break;
    inner = child;
  }
  return inner;
}

/** A receiver's name: a type's plain name (typeName); in TypeScript without non-null marks (`a!.b` → `a.b`). */
function receiverName(written: string, info: LanguageInfo): string {
  const name = typeName(written);
  return info.name === 'typescript' || info.name === 'tsx' ? name.replace(/!(?=\.|$)/g, '') : name;
}

/** A conversion operator's qualified name: `S::operator int`, or `MACRO operator int` (its `::` MISSING). */
const CONVERSION_OPERATOR = /(?:^|::|\s)operator\b/;

/** A path property split into its `|` alternatives, by its text (a query has a handful). */
const parsedAlternatives = new Map<string, string[]>();

function alternativesOf(property: string): string[] {
  let alternatives = parsedAlternatives.get(property);
  if (!alternatives) parsedAlternatives.set(property, (alternatives = property.split('|')));
  return alternatives;
}

/**
 * Parsed `field:type/field` paths, by their text (a query has a handful). `key` names a step's
 * look-up: the steps before it as written, then its field (or `:type` when it has none).
 */
const parsedPaths = new Map<string, { field: string; type: string | undefined; key: string }[]>();

/** A child a path looked up from the definition's node (null: none), with its type once asked. */
interface Lookup {
  node: Node | null;
  type?: string;
}

/**
 * The node a path leads to from `node`: `/`-separated steps, each `field` (a named child in that
 * field, as `field: (_)` in a pattern), `field:type` (of that type, as `field: (type)`) or `:type`
 * (the first child of that type in any field or none, as `(type)` in a pattern). `lookups` keeps
 * what paths from the same node found, so a step they share is asked of tree-sitter once.
 */
function followPath(node: Node, path: string, lookups = new Map<string, Lookup>()): Node | undefined {
  let steps = parsedPaths.get(path);
  if (!steps) {
    const written = path.split('/');
    steps = written.map((step, index) => {
      const [field = '', type] = step.split(':');
      const before = written.slice(0, index).join('/');
      return { field, type, key: `${before}>${field === '' ? `:${type}` : field}` };
    });
    parsedPaths.set(path, steps);
  }
  let current: Node | null = node;
  for (const step of steps) {
    const type = step.type;
    let lookup = lookups.get(step.key);
    if (!lookup) {
      lookup =
        step.field === ''
          ? { node: current.namedChildren.find((child) => child.type === type) ?? null, type }
          : { node: current.childForFieldName(step.field) };
      lookups.set(step.key, lookup);
    }
    current = lookup.node;
    if (!current) return undefined;
    if (type === undefined ? !current.isNamed : (lookup.type ??= current.type) !== type) return undefined;
  }
  return current;
}

/** A node's text, sliced from the source it was parsed from. */
type NodeText = ((node: Node) => string) & { source: string };

/**
 * The name starting at `start` when the text alone shows it is one plain JavaScript identifier
 * (`run`, `#secret`, `$el`) and nothing more: the word is followed, after blanks, by what can only
 * come after a name (`(`, `<`, `:`, `=`, `;`, `,`, `)`, `{`, `?`, `!`). Its node is then an
 * identifier of exactly that text, named as written, so neither its type nor its end need asking
 * tree-sitter. Undefined otherwise (strings, numbers, computed keys, `A.B`, escapes): ask it.
 */
function plainWordAt(source: string, start: number): string | undefined {
  let end = start + (source.charCodeAt(start) === HASH ? 1 : 0);
  // ASCII names are scanned by hand (6,000 names: ~1 ms instead of ~5 with the Unicode regex).
  if (!isAsciiWordCode(source.charCodeAt(end)) || isDigitCode(source.charCodeAt(end))) end = start;
  else while (isAsciiWordCode(source.charCodeAt(++end)));
  let word: string | undefined;
  if (end > start && !(source.charCodeAt(end) >= 0x80)) word = source.slice(start, end);
  else {
    PLAIN_WORD.lastIndex = start;
    word = PLAIN_WORD.exec(source)?.[0];
  }
  if (word === undefined) return undefined;
  let after = start + word.length;
  while (after < source.length && isBlank(source.charCodeAt(after))) after++;
  return after === source.length || NAME_FOLLOWERS.includes(source[after]!) ? word : undefined;
}

const PLAIN_WORD = /#?[\p{ID_Start}$_][\p{ID_Continue}$]*/uy;

/** `[A-Za-z0-9_$]` (false for NaN, past the end). */
function isAsciiWordCode(code: number): boolean {
  return (
    (code >= 0x61 && code <= 0x7a) ||
    (code >= 0x41 && code <= 0x5a) ||
    (code >= 0x30 && code <= 0x39) ||
    code === 0x5f ||
    code === 0x24
  );
}

function isDigitCode(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}
const NAME_FOLLOWERS = '(<:=;,){?!';

/** A C++ declarator name `ns::Type::f` is the name `f` qualified by `ns`, `Type`. */
function splitName(
  nameNode: Node | undefined,
  info: LanguageInfo,
  text: NodeText,
): { name: string; qualifier: string[] } {
  // `export default function () {}` has no name of its own: it is the module's default export.
  if (!nameNode) return { name: 'default', qualifier: [] };
  const word = TEXT_CHECKED_LANGUAGES.has(info.name) ? plainWordAt(text.source, nameNode.startIndex) : undefined;
  if (word !== undefined) return { name: word, qualifier: [] };
  const type = nameNode.type;
  const written = text(nameNode);
  if (type === 'computed_property_name' && written.startsWith('[(')) {
    const key = sequenceKey(nameNode);
    if (key) return { name: plainName(type, `[${text(key)}]`), qualifier: [] };
  }
  if (type !== 'qualified_identifier') return { name: plainName(type, written), qualifier: [] };
  const unqualified = withoutLeadingType(written);
  // An operator's name is one segment, though a conversion's type can hold `::` (`operator std::string`).
  const operator = /(?:^|::)(operator\b.*)$/.exec(unqualified);
  const segments = operator
    ? operator.index === 0
      ? []
      : unqualified.slice(0, operator.index).split('::')
    : unqualified.split('::');
  const last = operator ? operator[1]! : (segments.pop() ?? written);
  return {
    name: operator ? conversionOperatorName(last) : typeName(last),
    qualifier: segments.map(typeName).filter((segment) => segment.length > 0 && info.separator === '::'),
  };
}

/**
 * The key a computed name `[(a = …, b = …, Symbol.iterator)]` evaluates to: the last operand of its
 * comma sequence. TypeScript compiles private fields into such keys (`[(_C_x = new WeakMap(),
 * Symbol.asyncIterator)]() {…}`), whose text runs over many lines; the method is `C[Symbol.asyncIterator]`.
 */
function sequenceKey(name: Node): Node | undefined {
  const parenthesized = name.namedChild(0);
  const sequence = parenthesized?.type === 'parenthesized_expression' ? parenthesized.namedChild(0) : null;
  return sequence?.type === 'sequence_expression'
    ? (sequence.namedChild(sequence.namedChildCount - 1) ?? undefined)
    : undefined;
}

/**
 * A C++ qualified name without what error recovery made part of it: tree-sitter reads
 * `DECL_MACRO T f(…) {…}` as the type `DECL_MACRO` and a qualified name `T f` whose `::` is
 * MISSING, and takes a return type on the line before a qualified name into it (`typename
 * C::size_type\nC::operator()`). A name has no blank outside its template arguments (blanks
 * around `::` aside) until an `operator`, whose name can hold some (`operator bool`): what comes
 * before such a blank is not the name.
 */
function withoutLeadingType(written: string): string {
  const text =
    written.includes(' ') || written.includes('\n') || written.includes('\t')
      ? written.replace(/\s*::\s*/g, '::')
      : written;
  if (!/\s/.test(text)) return text;
  let depth = 0;
  let start = 0;
  for (let index = 0; index < text.length; index++) {
    const char = text[index]!;
    if (char === '<') depth++;
    else if (char === '>' && depth > 0) depth--;
    else if (depth > 0) continue;
    else if (char === ' ' || char === '\n' || char === '\t' || char === '\r') start = index + 1;
    else if (
      char === 'o' &&
      text.startsWith('operator', index) &&
      !/[\w$]/.test(text[index - 1] ?? '') &&
      !/[\w$]/.test(text[index + 8] ?? '')
    )
      break;
  }
  return text.slice(start);
}

/**
 * A definition's name as its users write it: a string key `'GET /'` without its quotes, computed
 * or not (`['GET /']`, as `o['GET /'] = …`); any other computed key `[Symbol.iterator]` or a C++
 * `operator<` as written; a type `Point<T>` (Rust impl, C++ specialisation) without its arguments.
 */
function plainName(type: string, written: string): string {
  if (type === 'string') return written.slice(1, -1);
  if (type === 'computed_property_name') return STRING_KEY.exec(written)?.[1]?.slice(1, -1) ?? written;
  if (type === 'operator_name') return written;
  if (type === 'operator_cast') return conversionOperatorName(written);
  return typeName(written);
}

/**
 * A C++ conversion operator's name, `operator bool`: its node holds its parameters and qualifiers
 * too (`operator bool() const`), and its type can be written over several blanks. Any other
 * operator's name (`operator()`, `operator new[]`) is its node's text as it is.
 */
function conversionOperatorName(written: string): string {
  const conversion = /^operator\s+([^(]*[^\s(])\s*\(/.exec(written);
  return conversion ? `operator ${conversion[1]!.replace(/\s+/g, ' ')}` : written;
}

/** A computed key that is one plain string literal: `["k"]`, `[ 'k' ]` (no escapes, nothing else). */
const STRING_KEY = /^\[\s*("[^"\\\n]*"|'[^'\\\n]*')\s*\]$/;

/**
 * The plain name of a type as written in a receiver or impl header: `*List[T]` → `List`,
 * `Point<T>` → `Point`, `&'a mut Foo` → `Foo`, `fmt::Display` stays as written.
 */
function typeName(text: string): string {
  return text
    .replace(/^[&*\s]+/, '')
    .replace(/^'\w+\s+/, '')
    .replace(/^mut\s+/, '')
    .replace(/[<[].*$/s, '')
    .trim();
}

/** A node with its end, asked of tree-sitter once. */
interface Extent {
  node: Node;
  end: number;
}

/**
 * Where the definition ends: after the `;` that ends a class member (`f = () => 1;`, `abstract
 * g(): void;`), which tree-sitter makes the member's sibling though it is part of the definition
 * as written. Asked of tree-sitter only when the source has a `;` right there.
 */
function endOf(full: Extent, context: Context): number {
  if (context.source.charCodeAt(full.end) !== SEMICOLON) return full.end;
  const next = full.node.nextSibling;
  return next && next.type === ';' && !next.isNamed && next.startIndex === full.end ? next.endIndex : full.end;
}

const SEMICOLON = 0x3b;

/** The outermost node whose text is all this definition's: declarations and wrappers. */
function fullNode(entry: Captured, context: Context): Extent {
  const node = entry.node;
  let full: Extent = { node, end: entry.end };
  // `const f = () => …;` (JS) or `type T struct {…}` (Go) is the whole declaration when it
  // declares that one name alone.
  const type = node.type;
  const declarations = SINGLE_DECLARATIONS[type];
  if (declarations) {
    const parent = node.parent;
    if (parent && declarations.has(parent.type) && declaresOne(parent, type, context))
      full = { node: parent, end: parent.endIndex };
  }
  const wrappers = WRAPPERS[context.info.name];
  if (!wrappers || cannotBeWrapped(full.node.startIndex, context)) return full;
  // One `parent` per step: tree-sitter finds it by walking down from the root.
  for (let outer = full.node.parent; outer && wrappers.has(outer.type); outer = outer.parent)
    full = { node: outer, end: outer.endIndex };
  return full;
}

/** Whether `declaration` has one named child of type `type` (its named children can be comments too). */
function declaresOne(declaration: Node, type: string, context: Context): boolean {
  const key = `${declaration.id} ${type}`;
  let one = context.soleDeclarations.get(key);
  if (one === undefined) {
    one =
      declaration.namedChildCount === 1 ||
      declaration.namedChildren.filter((child) => child.type === type).length === 1;
    context.soleDeclarations.set(key, one);
  }
  return one;
}

/**
 * Languages whose wrappers (`export`, `declare`) end with a keyword just before what they wrap,
 * and whose nodes never end in a newline, so the text can answer for tree-sitter. Not C++: a
 * `template<…> requires requires (T a) { … }` header ends with `}`; nor Python: a decorator ends
 * with anything; nor C/C++/Rust/C#, whose preprocessor lines or doc comments end in a newline.
 */
const TEXT_CHECKED_LANGUAGES: ReadonlySet<string> = new Set(['javascript', 'typescript', 'tsx']);

/**
 * True when the text before `start` rules out a wrapper around the node starting there: a
 * wrapper's last token before the node it wraps is a keyword (`export`, `default`, `declare`) or
 * a comment, while here it is a bracket or separator (`}`, `;`, `{`, `,`) with no comment marker
 * before it on its line, or nothing at all.
 */
function cannotBeWrapped(start: number, context: Context): boolean {
  if (!TEXT_CHECKED_LANGUAGES.has(context.info.name)) return false;
  const source = context.source;
  let at = start - 1;
  while (at >= 0 && isBlank(source.charCodeAt(at))) at--;
  if (at < 0) return true;
  if (!'};{,'.includes(source[at]!)) return false;
  // A line comment could end with that bracket (`export // }`): refuse when its line has a marker.
  return context.lines.firstMarkerOnLine(at, source) >= at;
}

const NEWLINE = 0x0a;
const SLASH = 0x2f;
const HASH = 0x23;
const LESS_THAN = 0x3c;
const MINUS = 0x2d;

function isBlank(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === NEWLINE || code === 0x0d || code === 0x0b || code === 0x0c;
}

/**
 * `export` on a line of its own before what it exports (`export\nfunction w() {}`): tree-sitter
 * ends a statement at the line break there (it reads `export` as an identifier), so the keyword
 * comes back as an expression statement before the declaration instead of as its wrapper. `export`
 * is a reserved word: a statement of that one word (and comments after it on its line) can only be
 * the keyword, and the definition starts there, as `export function w() {}` on one line does.
 * Returns `full` grown back over the keyword (its end kept), or undefined. The text is checked
 * first, so tree-sitter is asked only when the line before the definition is such a statement.
 */
function splitExport(full: Extent, context: Context): Extent | undefined {
  if (!TEXT_CHECKED_LANGUAGES.has(context.info.name)) return undefined;
  const source = context.source;
  let keywordEnd = full.node.startIndex;
  while (keywordEnd > 0 && isBlank(source.charCodeAt(keywordEnd - 1))) keywordEnd--;
  // Only blanks lie between: a line break among them, and `export` starting the line before.
  let lineBreak = keywordEnd;
  while (lineBreak < full.node.startIndex && source.charCodeAt(lineBreak) !== NEWLINE) lineBreak++;
  if (keywordEnd === 0 || lineBreak === full.node.startIndex) return undefined;
  const lineStart = source.lastIndexOf('\n', keywordEnd - 1) + 1;
  EXPORT_LINE.lastIndex = lineStart;
  const line = EXPORT_LINE.exec(source);
  if (!line) return undefined;
  const keywordStart = lineStart + line[1]!.length;
  // The declaration can be an expression statement's only child (TypeScript `namespace N {…}`).
  let statement: Node = full.node;
  let keyword = statement.previousNamedSibling;
  if (
    !keyword &&
    statement.parent?.type === 'expression_statement' &&
    statement.parent.startIndex === statement.startIndex
  ) {
    statement = statement.parent;
    keyword = statement.previousNamedSibling;
  }
  if (
    !keyword ||
    keyword.type !== 'expression_statement' ||
    keyword.startIndex !== keywordStart ||
    keyword.endIndex !== keywordEnd
  )
    return undefined;
  return { node: keyword, end: full.end };
}

/** A line of `export` alone, after indentation (group 1), with comments after it at most. */
const EXPORT_LINE = /([ \t]*)export(?:[ \t]*(?:\/\/.*|\/\*(?:[^*\n]|\*(?!\/))*\*\/))*[ \t]*$/my;

/**
 * Where `full` really starts, counting attached siblings and overload signatures; undefined if at
 * `full`. `hasBody`: whether the definition has a block (only an implementation has overloads).
 */
function attachedStart(full: Extent, entry: Captured, hasBody: boolean, context: Context): Node | undefined {
  const attached = ATTACHED_SIBLINGS[context.info.name];
  // Only a function with a block, in a grammar that has them, has overload signatures before it:
  // `function f(): void; namespace f {…}` are merged declarations, both listed.
  const overloaded = context.hasSignatures && hasBody && FUNCTION_KINDS.has(entry.role);
  // Nothing can be attached: no attached kinds in this language, and no overloads here.
  if (!attached && !overloaded) return undefined;
  if (TEXT_CHECKED_LANGUAGES.has(context.info.name) && blankLineBefore(full.node.startIndex, context.source))
    return undefined;
  let start: Node | undefined;
  for (let sibling = full.node.previousNamedSibling; sibling; sibling = sibling.previousNamedSibling) {
    // Only what touches the definition (no blank line between) is attached to it.
    if (context.lines.rowAt(sibling.endIndex) < (start ?? full.node).startPosition.row - 1) break;
    // Its type is asked of tree-sitter once, for every test below.
    const type = sibling.type;
    if (attached?.(sibling, type, context.source) || (overloaded && isOverloadOf(sibling, type, entry, context)))
      start = sibling;
    else break;
  }
  return start;
}

/**
 * True when only blanks precede `start` up to the file's start or a blank line: then no sibling
 * before it touches it (in the languages of TEXT_CHECKED_LANGUAGES, no node ends in blank lines).
 */
function blankLineBefore(start: number, source: string): boolean {
  let newlines = 0;
  for (let at = start - 1; at >= 0; at--) {
    const code = source.charCodeAt(at);
    if (code === NEWLINE && ++newlines === 2) return true;
    if (!isBlank(code)) return false;
  }
  return true;
}

/** Whether the grammar has the node types of overload signatures. */
function hasSignatureTypes(grammar: Grammar): boolean {
  const types = grammar.language.types;
  return [...OVERLOAD_SIGNATURES].some((type) => types.includes(type));
}

/** Whether `sibling` (of type `type`) is an overload signature of the function `entry` (attachedStart decides that
 * it may have some). */
function isOverloadOf(sibling: Node, type: string, entry: Captured, context: Context): boolean {
  const signature = type === 'export_statement' ? sibling.childForFieldName('declaration') : sibling;
  if (signature === null || !OVERLOAD_SIGNATURES.has(signature === sibling ? type : signature.type)) return false;
  const name = signature.childForFieldName('name');
  return name !== null && context.source.slice(name.startIndex, name.endIndex) === entry.name;
}

/**
 * Bodies that are no `body` field: C#'s expression-bodied members (`int F() => 1;`), Kotlin's
 * `function_body`, both its block (`fun f() { … }`) and its expression (`fun f() = 1`), and the
 * lambda a Kotlin property binds (`val f = { x: Int -> x }`: the whole literal, its parameters included).
 */
const UNFIELDED_BODIES: ReadonlySet<string> = new Set(['arrow_expression_clause', 'function_body', 'lambda_literal']);

/** The function's block: its own `body`, or the body of the function a declarator/field binds. */
function bodyNode(node: Node, context: Context): Node | undefined {
  const own = node.childForFieldName('body');
  if (own) return own;
  for (const field of ['value', 'right']) {
    let bound = node.childForFieldName(field);
    // Go binds through expression lists: `f := func() {…}`, `var f = func() {…}`.
    if (context.hasExpressionLists && bound?.type === 'expression_list' && bound.namedChildCount === 1)
      bound = bound.namedChild(0);
    const boundBody = bound?.childForFieldName('body');
    if (boundBody) return boundBody;
  }
  if (!context.hasExpressionBodies) return undefined;
  const direct = node.namedChildren.find((child) => UNFIELDED_BODIES.has(child.type));
  // A Kotlin property bound to `fun(x: Int) = …`: the anonymous function's own body.
  const anonymous = direct ? undefined : node.namedChildren.find((child) => child.type === 'anonymous_function');
  return direct ?? anonymous?.namedChildren.find((child) => UNFIELDED_BODIES.has(child.type));
}

/**
 * Comments between a function's header and its block (Python: `def f():` then `# why` lines,
 * which tree-sitter leaves outside the block): part of the body as written. Undefined: none.
 */
function leadingComments(body: Node, entry: Captured, context: Context): Node | undefined {
  // Such a comment lies between the definition's start and its block's: without a comment marker
  // there (`#`, `/`, Ruby's `=begin`), there is none to look for.
  // In JavaScript and TypeScript a `comment` opens with `/` (`<!--` is an html_comment), and the
  // `=` of every `x = () => {…}` would otherwise send each bound function to tree-sitter.
  const marker = TEXT_CHECKED_LANGUAGES.has(context.info.name) ? SLASH_MARKER : COMMENT_MARKERS;
  if (!marker.test(context.source.slice(entry.node.startIndex, body.startIndex))) return undefined;
  let first: Node | undefined;
  for (let sibling = body.previousSibling; sibling && sibling.type === 'comment'; sibling = sibling.previousSibling)
    first = sibling;
  return first;
}

const SLASH_MARKER = /\//;
const COMMENT_MARKERS = /[#/=]/;

/** How many of the open containers qualify a `this` member: through the innermost class, else all of them (the
 * constructor function). */
function thisOwnerDepth(open: readonly Captured[]): number {
  for (let depth = open.length; depth > 0; depth--) {
    const role = open[depth - 1]!.role;
    if (role === 'scope' || CLASS_LIKE_KINDS.has(role)) return depth;
  }
  return open.length;
}

function span(startOffset: number, startRow: number, endOffset: number, context: Context): SourceSpan {
  return { startLine: startRow + 1, endLine: context.lines.rowAt(endOffset) + 1, startOffset, endOffset };
}

/** Row (0-based) of an offset, as tree-sitter counts them: by `\n`. */
class LineIndex {
  /** Offsets just after each `\n`, in order. */
  private readonly starts: number[] = [];

  constructor(source: string) {
    for (let at = source.indexOf('\n'); at >= 0; at = source.indexOf('\n', at + 1)) this.starts.push(at + 1);
  }

  /** Per row, the offset of its first comment-marker character (see firstMarkerOnLine), found when first asked. */
  private readonly firstMarkers = new Map<number, number>();

  /**
   * The offset of the first character on `offset`'s line that can start a comment (`/`, `#`, `<`
   * of `<!--`, `-` of `-->`), or the line's end when it has none. Each line is scanned once, so
   * a minified file, one line holding every definition, costs its length once rather than once
   * per definition.
   */
  firstMarkerOnLine(offset: number, source: string): number {
    const row = this.rowAt(offset);
    let marker = this.firstMarkers.get(row);
    if (marker === undefined) {
      const end = row < this.starts.length ? this.starts[row]! - 1 : source.length;
      for (marker = row === 0 ? 0 : this.starts[row - 1]!; marker < end; marker++) {
        const code = source.charCodeAt(marker);
        if (code === SLASH || code === HASH || code === LESS_THAN || code === MINUS) break;
      }
      this.firstMarkers.set(row, marker);
    }
    return marker;
  }

  /** How many line starts are at or before `offset`. */
  rowAt(offset: number): number {
    let low = 0;
    let high = this.starts.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.starts[middle]! <= offset) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}

/** The span from its line's start when only indentation precedes it, so the text keeps its indentation. */
function withIndentation(result: SourceSpan, source: string): SourceSpan {
  // Scans back over blanks only: a minified file is one long line holding every definition.
  let lineStart = result.startOffset;
  while (lineStart > 0 && (source[lineStart - 1] === ' ' || source[lineStart - 1] === '\t')) lineStart--;
  if (lineStart === 0 || source[lineStart - 1] === '\n') result.startOffset = lineStart;
  return result;
}

/** Overload signatures folded into the implementation after them are not listed on their own. */
function dropFoldedSignatures(definitions: Definition[]): Definition[] {
  // Implementations by qualified name, so a file of many signatures (an interface, a .d.ts) stays linear.
  const implementations = new Map<string, Definition[]>();
  for (const definition of definitions) {
    // A namespace merged with a function of its name (`fs.readFile`) is not that function's implementation.
    if (definition.body === null || !isFunctionKind(definition.kind)) continue;
    const same = implementations.get(definition.qualifiedName);
    if (same) same.push(definition);
    else implementations.set(definition.qualifiedName, [definition]);
  }
  return definitions.filter(
    (definition) =>
      definition.body !== null ||
      !implementations
        .get(definition.qualifiedName)
        ?.some((other) => other.startOffset <= definition.startOffset && definition.endOffset <= other.endOffset),
  );
}
