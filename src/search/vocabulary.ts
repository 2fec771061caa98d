/**
 * What a query's words mean beyond their letters, for the lexical channel and the ranking:
 *
 * - Each distinct word (by its stem) is a concept of the query; a concept also matches the
 *   abbreviations code uses for the word (`directory`: `dir`; `dir`: `directory`), at
 *   ABBREVIATION_WEIGHT, and a few verbs that name the same operation (`delete`: `remove`), at
 *   SYNONYM_WEIGHT. Two words that code writes as one name (`make directory`: `mkdir`; any two
 *   neighbours stuck together: `base name`: `basename`) both match that name, at
 *   ABBREVIATION_WEIGHT. A name that begins with the word and runs on (`copy`: `copyfileobj`)
 *   matches at PREFIX_WEIGHT. A concept counts once in the score however many of its forms a
 *   chunk holds (bm25.ts).
 * - Operations come in opposite pairs (encode/decode, read/write, open/close, …): `opposes`
 *   says whether a definition's name is the opposite of what the query asks for, so that
 *   "decode base64 body" does not rank `body_encode` first for sharing three of its four words.
 */
import { stem } from './bm25.js';
import { splitIdentifier } from './hashed-embedder.js';
import { baseSymbol, isStopword, queryTerms, splitName } from './tokens.js';

/** A form of a concept, and how much a match of it counts (1: the word itself). */
export interface ConceptVariant {
  term: string;
  weight: number;
}

/** One word of a query with the other forms that stand for it; `variants[0]` is the word itself. */
export interface QueryConcept {
  variants: ConceptVariant[];
  /**
   * The word as written (lower-cased), when a name that begins with it may stand for it at
   * PREFIX_WEIGHT: code writes names run together (`copyfileobj`, `basename`, `splitext`), which
   * no split into words finds; stores look these names up in their vocabulary.
   */
  prefix?: string | undefined;
  /** How much the concept weighs in the score (1; less for a verb that says little: GENERIC_VERB_WEIGHT). */
  weight: number;
}

export const ABBREVIATION_WEIGHT = 0.8;
export const SYNONYM_WEIGHT = 0.5;
export const PREFIX_WEIGHT = 0.5;
/**
 * Verbs that say little of what a definition does (make, get, create, check, …): a question
 * leads with one ("make a schema optional") where the definition is named by its other words
 * (`optional`), so they weigh this much of a word.
 */
export const GENERIC_VERB_WEIGHT = 0.3;
const GENERIC_VERB_WORDS =
  'get set make create build do use allow return give take have let ' +
  'check find compute calculate convert generate produce obtain ' +
  'define';
let genericVerbs: ReadonlySet<string> | undefined;
function isGenericVerb(stemmed: string): boolean {
  genericVerbs ??= new Set(GENERIC_VERB_WORDS.split(' ').map(stem));
  return genericVerbs.has(stemmed);
}

/** Words and the abbreviations code writes them as, each group one word. */
const ABBREVIATIONS = [
  'directory dir dirs folder',
  'message msg',
  'number num',
  'string str',
  'integer int',
  'dictionary dict',
  'configuration config cfg conf',
  'initialize init',
  'temporary temp tmp',
  'length len',
  'argument arg args',
  'environment env',
  'error err',
  'request req',
  'response resp',
  'connection conn',
  'buffer buf',
  'character char chr',
  'previous prev',
  'current cur curr',
  'source src',
  'destination dest dst',
  'position pos',
  'index idx',
  'attribute attr attrs',
  'reference ref',
  'parameter param params',
  'value val',
  'execute exec',
  'synchronize sync',
  'information info',
  'object obj',
  'password passwd',
  'command cmd',
  'utility util utils',
  'maximum max',
  'minimum min',
  'address addr',
  'allocate alloc',
  'calculate calc',
  'compare cmp',
  'database db',
  'expression expr',
  'format fmt',
  'image img',
  'library lib',
  'memory mem',
  'package pkg',
  'pointer ptr',
  'process proc',
  'receive recv',
  'sequence seq',
  'statistics stats',
  'timestamp ts',
  'application app',
  'authentication auth',
  'callback cb',
  'context ctx',
  'descriptor desc',
  'exception exc',
  'extension ext',
  'identifier id',
  'iterator iter',
  'language lang',
  'manager mgr',
  'module mod',
  'operation op',
  'option opt opts',
  'random rand',
  'specification spec',
  'system sys',
  'template tmpl',
  'text txt',
  'transaction txn',
  'version ver',
];

/** Verbs that name one operation (a concept of either matches the others at SYNONYM_WEIGHT). */
const SYNONYMS = [
  'create make',
  'delete remove erase unlink',
  'fetch retrieve obtain',
  'start begin launch',
  'find search lookup locate',
  'show display',
  'check verify validate',
  'convert transform',
  'copy clone duplicate',
  'stop halt terminate',
  'run execute invoke',
  'wait block',
];

/** Two words (stems, in either order) that code writes as one name. */
const COMPOUNDS: Array<[string, string, string[]]> = [
  ['make', 'directory', ['mkdir', 'makedirs']],
  ['create', 'directory', ['mkdir', 'makedirs']],
  ['remove', 'directory', ['rmdir', 'removedirs', 'rmtree']],
  ['delete', 'directory', ['rmdir', 'removedirs', 'rmtree']],
  ['change', 'directory', ['chdir']],
  ['working', 'directory', ['getcwd', 'cwd']],
  ['make', 'temporary', ['mkdtemp', 'mkstemp', 'mktemp']],
  ['create', 'temporary', ['mkdtemp', 'mkstemp', 'mktemp']],
  ['regular', 'expression', ['regex', 'regexp']],
];

/**
 * Opposite operations: each entry is two groups of words; a word of one group is the opposite of
 * every word of the other (`get` is also the opposite of `put`, by a second entry).
 */
const OPPOSITES: Array<[string, string]> = [
  ['encode encoder encoding', 'decode decoder decoding'],
  ['encrypt encryption', 'decrypt decryption'],
  ['compress compressor compression', 'decompress decompressor decompression'],
  ['serialize serializer serialization', 'deserialize deserializer deserialization'],
  ['marshal', 'unmarshal'],
  ['dump dumps save store', 'load loads'],
  ['format stringify', 'parse parser'],
  ['read reader readline readlines', 'write writer writeline writelines'],
  ['send', 'receive recv'],
  ['open opener', 'close closer'],
  ['get getter', 'set setter'],
  ['get', 'put'],
  ['add', 'remove'],
  ['insert', 'delete remove'],
  ['push', 'pop'],
  ['acquire', 'release'],
  ['lock', 'unlock'],
  ['start', 'stop'],
  ['connect', 'disconnect'],
  ['mount', 'unmount umount'],
  ['enable', 'disable'],
  ['show', 'hide'],
  ['import', 'export'],
  ['upload', 'download'],
  ['login logon', 'logout logoff'],
  ['attach', 'detach'],
  ['increment increase', 'decrement decrease'],
  ['enqueue', 'dequeue'],
  ['join', 'split'],
  ['create', 'destroy'],
  ['install', 'uninstall'],
  ['subscribe', 'unsubscribe'],
  ['register', 'unregister'],
  ['quote', 'unquote'],
  ['escape', 'unescape'],
  ['wrap', 'unwrap'],
  ['pack', 'unpack'],
  ['expand', 'collapse'],
  ['freeze', 'thaw'],
];

const stems = (words: string): string[] => words.split(' ').map(stem);

/** Stem → the stems of its group, for each table (built on first use: stemming is not free). */
let tables:
  | {
      abbreviations: Map<string, string[]>;
      synonyms: Map<string, string[]>;
      opposites: Map<string, Set<string>>;
      sameOperation: Map<string, Set<string>>;
    }
  | undefined;

function vocabulary(): NonNullable<typeof tables> {
  if (tables) return tables;
  const groups = (lines: readonly string[]): Map<string, string[]> => {
    const map = new Map<string, string[]>();
    for (const line of lines) {
      const group = stems(line);
      for (const member of group)
        map.set(member, [...(map.get(member) ?? []), ...group.filter((other) => other !== member)]);
    }
    return map;
  };
  const opposites = new Map<string, Set<string>>();
  const sameOperation = new Map<string, Set<string>>();
  const add = (map: Map<string, Set<string>>, key: string, values: readonly string[]): void => {
    const set = map.get(key) ?? new Set<string>();
    for (const value of values) set.add(value);
    map.set(key, set);
  };
  for (const [left, right] of OPPOSITES) {
    const [a, b] = [stems(left), stems(right)];
    for (const word of a) {
      add(opposites, word, b);
      add(sameOperation, word, a);
    }
    for (const word of b) {
      add(opposites, word, a);
      add(sameOperation, word, b);
    }
  }
  tables = { abbreviations: groups(ABBREVIATIONS), synonyms: groups(SYNONYMS), opposites, sameOperation };
  return tables;
}

/**
 * The concepts of a query: its distinct words by stem (at most `max`), each with its abbreviations
 * and synonyms, plus the names two of its words make together.
 */
export function queryConcepts(query: string, max = 64): QueryConcept[] {
  const { abbreviations, synonyms } = vocabulary();
  const concepts: QueryConcept[] = [];
  const seen = new Set<string>();
  const conceptOf = (word: string): QueryConcept | undefined => {
    const stemmed = stem(word);
    return concepts.find((concept) => concept.variants[0]!.term === stemmed);
  };
  const terms = queryTerms(query, max);
  for (const term of terms) {
    const stemmed = stem(term);
    if (seen.has(stemmed)) continue;
    seen.add(stemmed);
    const variants: ConceptVariant[] = [{ term: stemmed, weight: 1 }];
    const addVariant = (other: string, weight: number): void => {
      if (other !== stemmed && !variants.some((variant) => variant.term === other))
        variants.push({ term: other, weight });
    };
    for (const other of abbreviations.get(stemmed) ?? []) addVariant(other, ABBREVIATION_WEIGHT);
    for (const other of synonyms.get(stemmed) ?? []) addVariant(other, SYNONYM_WEIGHT);
    concepts.push({
      variants,
      weight: isGenericVerb(stemmed) ? GENERIC_VERB_WEIGHT : 1,
      ...(/^[a-z]{3,}$/.test(term) ? { prefix: term } : {}),
    });
  }
  // Two words code writes as one name, stuck together (`base name`: basename, `to string`:
  // tostring), are a form of each of them that is a word of the query.
  const words = query.toLowerCase().split(/\s+/);
  for (let i = 0; i + 1 < words.length; i++) {
    const joined = `${words[i]}${words[i + 1]}`;
    if (!/^[a-z]{2,}$/.test(words[i]!) || !/^[a-z]{2,}$/.test(words[i + 1]!) || joined.length < 5) continue;
    // A filler word joins no name, but for `to` before another (`tostring`, `to_json`'s `tojson`).
    if ((isStopword(words[i]!) && words[i] !== 'to') || isStopword(words[i + 1]!)) continue;
    const term = stem(joined);
    for (const concept of [conceptOf(words[i]!), conceptOf(words[i + 1]!)]) {
      if (concept && !concept.variants.some((variant) => variant.term === term))
        concept.variants.push({ term, weight: ABBREVIATION_WEIGHT });
    }
  }
  // A name two words make (`mkdir`) stands for both: a chunk so named matches each of them.
  const byTerm = new Map(
    concepts.flatMap((concept) => concept.variants.map((variant) => [variant.term, concept] as const)),
  );
  for (const [first, second, names] of COMPOUNDS) {
    const one = byTerm.get(stem(first));
    const other = byTerm.get(stem(second));
    if (!one || !other || one === other) continue;
    for (const name of names) {
      for (const concept of [one, other]) {
        if (!concept.variants.some((variant) => variant.term === name))
          concept.variants.push({ term: name, weight: ABBREVIATION_WEIGHT });
      }
    }
  }
  return concepts;
}

/**
 * Verbs that name an operation precisely enough that a definition doing it says so in its name
 * (`decode`, `kill`, `shuffle`), besides those of OPPOSITES. Not the ones definitions leave out
 * of their names (get, set, make, create, compute, find, check, convert: `basename`, `Counter`).
 */
const ACTIONS = (
  'cancel schedule sleep wait kill terminate copy move rename save shuffle sort filter flatten normalize ' +
  'resolve validate hash sign verify print log retry cache publish emit dispatch notify pause resume restart ' +
  'listen accept bind extract archive iterate walk traverse flush sync truncate shorten indent dedent strip trim ' +
  'pad replace compile execute run invoke spawn fork clone render draw display insert append clear reset update ' +
  'refresh reload rotate seek peek skip gather sum merge'
).split(' ');

/** The operation words of a query (stems found in the table of opposites). */
export function queryOperations(query: string): Set<string> {
  const { opposites } = vocabulary();
  return new Set(
    queryTerms(query)
      .map(stem)
      .filter((term) => opposites.has(term)),
  );
}

/**
 * The operation a query leads with, when its first word is a verb that names one (ACTIONS or a
 * word of OPPOSITES): the forms that stand for it (its concept's variants). Undefined otherwise.
 */
export function queryAction(query: string, concepts: readonly QueryConcept[]): string[] | undefined {
  const first = queryTerms(query, 1)[0];
  if (first === undefined) return undefined;
  const stemmed = stem(first);
  if (!actions().has(stemmed)) return undefined;
  const concept = concepts.find((one) => one.variants[0]!.term === stemmed);
  // The word as written too: a stem need not begin the names that say it (`copi`, `copyfileobj`).
  return [...new Set([first, ...(concept?.variants ?? [{ term: stemmed }]).map((variant) => variant.term)])];
}

let actionStems: Set<string> | undefined;
function actions(): Set<string> {
  actionStems ??= new Set(
    [...ACTIONS.map(stem), ...vocabulary().opposites.keys()].filter(
      (verb) => !isGenericVerb(verb) && !UNNAMED_ACTIONS.has(verb),
    ),
  );
  return actionStems;
}
/** Operations a definition often does without naming them (`isoformat`, `ZipFile.write` adds a file), as stems. */
const UNNAMED_ACTIONS: ReadonlySet<string> = new Set(['format', 'add', 'put', 'store']);

/**
 * Whether a definition's own name says the action (`write_bytes`, `b64decode`, `copyfileobj`
 * for copy): a word of it begins with one of the action's forms, or for a form of four letters
 * or more, the name holds it (`isoformat`).
 */
export function namesAction(action: readonly string[], symbol: string): boolean {
  const own = baseSymbol(symbol).split(/\.|::/).at(-1)!;
  const parts = splitIdentifier(own.replace(/\$/g, ''));
  const whole = own.replace(/[_$]/g, '').toLowerCase();
  return action.some(
    (form) => parts.some((part) => part.startsWith(form)) || (form.length >= 4 && whole.includes(form)),
  );
}

/**
 * Whether a definition's name (`body_encode`, `StreamWriter.write`: its last two segments) holds
 * the opposite of an operation the query asks for, and no word of that operation itself.
 */
export function opposes(operations: ReadonlySet<string>, symbol: string): boolean {
  if (operations.size === 0) return false;
  const { opposites, sameOperation } = vocabulary();
  const words = new Set(splitName(symbol).map(stem));
  for (const operation of operations) {
    const against = opposites.get(operation)!;
    if (![...words].some((word) => against.has(word))) continue;
    const same = sameOperation.get(operation)!;
    if (![...words].some((word) => same.has(word) || operations.has(word))) return true;
  }
  return false;
}

/** Every form of a query's concepts: their stems, and the words names may begin with. */
export interface QueryForms {
  stems: ReadonlySet<string>;
  prefixes: readonly string[];
}

export function queryForms(concepts: readonly QueryConcept[]): QueryForms {
  return {
    stems: new Set(concepts.flatMap((concept) => concept.variants.map((variant) => variant.term))),
    prefixes: concepts.flatMap((concept) => (concept.prefix !== undefined ? [concept.prefix] : [])),
  };
}
