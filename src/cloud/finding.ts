/**
 * A finding as people and incident tools send it (plain text, JSON text, or an object such as
 * fis-recommender's {id, summary, type, description}) and what its words say: the failure modes
 * and the AWS services it names or only hints at (vocabulary.ts).
 *
 * Only values are read, never keys (a key named "network" says nothing about networks). Words are
 * lower-cased and a plural's s dropped; a phrase matches whole words in sequence, so "cpus" is
 * "cpu" and "cpuset" is nothing. Where a longer phrase covers a shorter one ("db instance" over
 * "instance", "cpu throttling" over "throttling", "oom killed" over "killed"), only the longer
 * counts: it says what the words mean together.
 */
import { InputError } from '../kernel/errors.js';
import { readJson } from '../jsonrpc/message.js';
import { isPlainObject } from '../config-reader.js';
import { CONCEPTS, DERIVED_CONCEPTS, SERVICES, type Phrase } from './vocabulary.js';

export const MAX_FINDING_BYTES = 10_240;

export interface Finding {
  id: string | null;
  text: string;
}

/** Keys whose value identifies the finding rather than describing it. */
const ID_KEYS = ['id', 'finding_id', 'findingId', 'investigationId'];

/** The finding's id and text, from plain text, JSON text or an object; refuses what is empty or too large. */
export function readFinding(input: unknown): Finding {
  if (isPlainObject(input)) return fromObject(input);
  if (typeof input !== 'string' || input.trim() === '')
    throw new InputError(
      'finding: give the finding as plain text, or as an object (or JSON text) {id, summary, type, description}',
    );
  if (Buffer.byteLength(input) > MAX_FINDING_BYTES)
    throw new InputError(`finding: at most ${MAX_FINDING_BYTES} bytes (got ${Buffer.byteLength(input)})`);
  const trimmed = input.trim();
  if (trimmed.startsWith('{')) {
    const reading = readJson(trimmed, { maxChars: MAX_FINDING_BYTES, maxDepth: 32 });
    if (reading.ok && isPlainObject(reading.value)) return fromObject(reading.value);
  }
  return { id: null, text: trimmed };
}

function fromObject(object: Record<string, unknown>): Finding {
  let size: number;
  try {
    size = Buffer.byteLength(JSON.stringify(object));
  } catch {
    throw new InputError('finding: cannot be written as JSON (nested too deeply, or circular)');
  }
  if (size > MAX_FINDING_BYTES)
    throw new InputError(`finding: at most ${MAX_FINDING_BYTES} bytes as JSON (got ${size})`);
  const id = ID_KEYS.map((key) => object[key]).find((value) => typeof value === 'string' || typeof value === 'number');
  const text = valuesOf(object).join(' . ');
  if (text.trim() === '') throw new InputError('finding: has no text to read (give summary or description)');
  return { id: id === undefined ? null : String(id), text };
}

/** String and number values, nested ones too (to a depth), ids left out. */
function valuesOf(value: unknown, depth = 0): string[] {
  if (depth > 6) return [];
  if (typeof value === 'string') return [value];
  if (typeof value === 'number') return [String(value)];
  if (Array.isArray(value)) return value.flatMap((item) => valuesOf(item, depth + 1));
  if (isPlainObject(value)) {
    return Object.entries(value)
      .filter(([key]) => !ID_KEYS.includes(key))
      .flatMap(([, item]) => valuesOf(item, depth + 1));
  }
  return [];
}

// ---------------------------------------------------------------- words

/** Lower-case words; a plural's final s dropped (tasks → task, pods → pod). */
export function tokenize(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((token) => token.length > 0)
    .map(normalize);
}

function normalize(token: string): string {
  if (token.length > 4 && token.endsWith('ies')) return `${token.slice(0, -3)}y`;
  // status, kinesis, redis keep their s; cpus, gpus lose it.
  if (
    token.length > 3 &&
    token.endsWith('s') &&
    !/(ss|is|os)$/.test(token) &&
    !(token.length > 4 && token.endsWith('us'))
  )
    return token.slice(0, -1);
  return token;
}

/** What a phrase group (a failure mode, a service) matched: how strongly, and by which phrases. */
export interface Match {
  strength: number;
  phrases: string[];
}

export interface Evidence {
  /** Failure modes, by concept name. */
  concepts: Map<string, Match>;
  /** Services the finding names (or resources given with it point at). */
  named: Map<string, Match>;
  /** Services only hinted at by a generic word ("database", "function", "cache"). */
  hinted: Map<string, Match>;
}

interface Hit {
  kind: 'concept' | 'service';
  group: string;
  start: number;
  end: number;
  phrase: Phrase;
}

interface Indexed {
  kind: Hit['kind'];
  group: string;
  phrase: Phrase;
  words: string[];
}

/**
 * Every phrase of the vocabulary by its first word, built once, so a finding is read in one pass;
 * and the longest phrase, in words: how far back a hit covering another can start.
 */
let byFirstWord: { index: Map<string, Indexed[]>; longest: number } | undefined;
function phraseIndex(): { index: Map<string, Indexed[]>; longest: number } {
  if (byFirstWord) return byFirstWord;
  const index = new Map<string, Indexed[]>();
  let longest = 0;
  const add = (kind: Hit['kind'], groups: Record<string, readonly Phrase[]>): void => {
    for (const [group, phrases] of Object.entries(groups)) {
      for (const phrase of phrases) {
        const words = tokenize(phrase.text);
        if (words.length === 0) continue;
        const list = index.get(words[0]!) ?? [];
        list.push({ kind, group, phrase, words });
        index.set(words[0]!, list);
        longest = Math.max(longest, words.length);
      }
    }
  };
  add('concept', CONCEPTS);
  add('service', SERVICES);
  byFirstWord = { index, longest };
  return byFirstWord;
}

/** Every occurrence of every phrase in `tokens`, less those a longer one of their kind covers. */
function hitsIn(tokens: readonly string[]): Hit[] {
  const { index, longest: longestPhrase } = phraseIndex();
  const hits: Hit[] = [];
  for (let start = 0; start < tokens.length; start++) {
    for (const entry of index.get(tokens[start]!) ?? []) {
      if (start + entry.words.length > tokens.length) continue;
      if (entry.words.every((word, i) => tokens[start + i] === word)) {
        hits.push({
          kind: entry.kind,
          group: entry.group,
          start,
          end: start + entry.words.length,
          phrase: entry.phrase,
        });
      }
    }
  }
  // A hit strictly inside a longer one of its kind is what the longer one is made of ("instance"
  // in "db instance"), not a word of its own. Longest span starting at each position, per kind:
  const longest = { concept: new Map<number, number>(), service: new Map<number, number>() };
  for (const hit of hits)
    longest[hit.kind].set(hit.start, Math.max(longest[hit.kind].get(hit.start) ?? 0, hit.end - hit.start));
  return hits.filter((hit) => {
    const length = hit.end - hit.start;
    for (let from = Math.max(0, hit.start - longestPhrase); from <= hit.start; from++) {
      const span = longest[hit.kind].get(from) ?? 0;
      if (span > length && from + span >= hit.end) return false;
    }
    return true;
  });
}

function add(into: Map<string, Match>, group: string, strength: number, label: string): void {
  const entry = into.get(group) ?? { strength: 0, phrases: [] };
  entry.strength = Math.max(entry.strength, strength);
  if (!entry.phrases.includes(label)) entry.phrases.push(label);
  into.set(group, entry);
}

/**
 * The failure modes and services `text` names. Read twice, as written ("DynamoDB") and with
 * CamelCase split ("ProvisionedThroughputExceededException" → "provisioned throughput exceeded
 * exception"), so API and exception names count for their words.
 */
export function evidenceOf(text: string): Evidence {
  const evidence: Evidence = { concepts: new Map(), named: new Map(), hinted: new Map() };
  for (const reading of [text, text.replace(/([a-z])([A-Z])/g, '$1 $2')]) {
    for (const hit of hitsIn(tokenize(reading))) {
      if (hit.kind === 'concept') add(evidence.concepts, hit.group, hit.phrase.weight, hit.phrase.text);
      else add(hit.phrase.names ? evidence.named : evidence.hinted, hit.group, hit.phrase.weight, hit.phrase.text);
    }
  }
  for (const { from, to } of DERIVED_CONCEPTS) {
    const parts = from.map((concept) => evidence.concepts.get(concept));
    if (parts.every((part) => part !== undefined)) {
      add(
        evidence.concepts,
        to,
        Math.min(...parts.map((part) => part!.strength)),
        from.map((concept, i) => `${concept} "${parts[i]!.phrases[0]}"`).join(' + '),
      );
    }
  }
  for (const service of evidence.named.keys()) evidence.hinted.delete(service);
  return evidence;
}

/** Services named by ARNs (arn:aws:rds:…) or resource types (aws:rds:db) given with the finding. */
export function servicesOfResources(resources: readonly string[], known: ReadonlySet<string>): Map<string, Match> {
  const found = new Map<string, Match>();
  resources.forEach((resource, index) => {
    const text = resource.trim();
    const arn = /^arn:aws[a-z-]*:([a-z0-9-]+):[^:]*:[^:]*:(.*)$/.exec(text);
    const type = /^aws:([a-z0-9-]+):([a-z0-9-]+)$/.exec(text);
    if (!arn && !type)
      throw new InputError(
        `resources[${index}]: "${resource}" is neither an ARN (arn:aws:…) nor a resource type (aws:<service>:<type>)`,
      );
    const service = arn ? arn[1]! : type![1]!;
    const rest = arn ? arn[2]! : type![2]!;
    let name: string | undefined;
    if (service === 'ec2')
      name = /volume|ebs/.test(rest) ? 'ebs' : /subnet|vpc|transit|route/.test(rest) ? 'network' : 'ec2';
    else if (service === 'autoscaling') name = 'ec2';
    else if (service === 'iam') name = 'awsapi';
    else if (known.has(service)) name = service;
    if (name) add(found, name, 1, text);
  });
  return found;
}

/** Regions named in the text (us-east-1), in order of appearance. */
export function regionsIn(text: string): string[] {
  return [
    ...new Set(
      text
        .toLowerCase()
        .match(
          /\b(?:us|eu|ap|sa|ca|me|af|il|mx)(?:-gov)?-(?:north|south|east|west|central|northeast|southeast|northwest|southwest)-\d\b/g,
        ) ?? [],
    ),
  ];
}

/** Availability Zone ids (use1-az2) and names (us-east-1b) in the text. */
export function zonesIn(text: string): { ids: string[]; names: string[] } {
  const lower = text.toLowerCase();
  return {
    ids: [...new Set(lower.match(/\b[a-z]{2,4}\d-az\d+\b/g) ?? [])],
    names: [...new Set(lower.match(/\b(?:us|eu|ap|sa|ca|me|af|il|mx)(?:-gov)?-[a-z]+-\d[a-z]\b/g) ?? [])],
  };
}
