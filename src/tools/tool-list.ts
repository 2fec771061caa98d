/**
 * The tools/list generated at build time (`npm run build` runs tool-list-writer.js): every tool as
 * tools/list publishes it, with its toolset and the family module that defines it, in one JSON
 * file next to this module. The server answers tools/list from it without importing a single tool
 * module or building a zod schema (a tool's module loads on its first call), which is most of what
 * an MCP client waits for at start-up.
 *
 * A stale file must never be served: it records the modules the list was built from (every module
 * in src/tools and what they import statically, compiled) and a hash of their contents and of
 * zod's version (zod converts the schemas); any difference, a missing module or an unreadable file
 * means the server builds the list live, as before. Reading and hashing the ~70 modules cost 6-10 ms
 * of CPU in every start-up (more than 2% of it), so the file also records each one's size and
 * modification time (and zod's package.json's): when all still match, as they do from one
 * `npm run build` to the next, their contents are the ones hashed and the hash is skipped (~1 ms of
 * stat calls). A file written again has a new time, and then the contents are hashed as before (an
 * installed package, whose times an archive changed, always is). Only leaf modules are imported
 * here: this runs before every tools/list.
 */
import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { TOOLSETS, type Toolset } from '../config.js';
import { messageOf } from '../kernel/errors.js';
import { createSha256 } from '../kernel/sha256.js';

/** Bumped when the file's layout changes, so an older file is rebuilt rather than misread. */
export const TOOL_LIST_FORMAT = 2;
/** dist/src/tools/tool-list.json */
export const TOOL_LIST_URL = new URL('./tool-list.json', import.meta.url);
/** dist/src/: the base the recorded source paths are relative to. */
export const SOURCES_BASE = new URL('../', import.meta.url);

export interface ListedTool {
  /** The family module that registers it (TOOL_FAMILIES in tools/index.ts). */
  module: string;
  toolset: Toolset;
  /** Exactly what tools/list publishes for it. */
  tool: Tool;
}

export interface GeneratedToolList {
  format: number;
  /** sha256 over zod's version and the contents of `sources`, in order. */
  fingerprint: string;
  /** The compiled modules the list was built from, relative to dist/src/. */
  sources: string[];
  /**
   * `stampOf` each of `sources`, in order, then of zod's package.json, when the list was written:
   * while they all match, the fingerprint is not computed again (see above).
   */
  stamps: string[];
  tools: ListedTool[];
}

export type ToolListReading = { tools: ListedTool[] } | { stale: string };

/** The hash of zod's version and of the given modules' contents; throws when one is unreadable. */
export function fingerprintOf(sources: readonly string[], base: URL = SOURCES_BASE): string {
  const hash = createSha256(); // node:crypto loads here only: matching stamps spare it
  hash.update(`zod@${zodVersion()}\n`);
  for (const source of sources) {
    hash.update(`${source}\n`);
    hash.update(readFileSync(new URL(source, base)));
  }
  return hash.digest('hex');
}

function zodVersion(): string {
  const manifest = JSON.parse(readFileSync(zodManifest(), 'utf8')) as { version?: unknown };
  return String(manifest.version);
}

function zodManifest(): URL {
  return new URL(import.meta.resolve('zod/package.json'));
}

/** A file's size and modification time, as the list records them; throws when it is gone. */
function stampOf(path: string): string {
  const { size, mtimeMs } = statSync(path);
  return `${size} ${mtimeMs}`;
}

/** The stamps of the given modules (paths relative to `base`) and of zod's package.json. */
export function stampsOf(sources: readonly string[], base: URL = SOURCES_BASE): string[] {
  // Plain paths: a URL per file would cost more than the stat call.
  const directory = fileURLToPath(base);
  return [...sources.map((source) => stampOf(directory + source)), stampOf(fileURLToPath(zodManifest()))];
}

/** Whether every recorded stamp still matches (false when one is missing or a file is gone). */
function stampsMatch(list: Partial<GeneratedToolList>, base: URL): boolean {
  const recorded = list.stamps;
  if (!Array.isArray(recorded) || recorded.length !== list.sources!.length + 1) return false;
  try {
    return stampsOf(list.sources!, base).every((stamp, index) => stamp === recorded[index]);
  } catch {
    return false;
  }
}

let shipped: ToolListReading | undefined;

/**
 * The shipped list (dist/src/tools/tool-list.json) if it matches the modules it was built from;
 * otherwise why not (the caller builds the list live). Read once per process: an HTTP server
 * creates one server per session.
 */
export function readToolList(): ToolListReading {
  return (shipped ??= checkToolList(TOOL_LIST_URL, SOURCES_BASE));
}

/** The list in `url` if it matches the modules under `base` it records; otherwise why not. */
export function checkToolList(url: URL, base: URL): ToolListReading {
  let list: Partial<GeneratedToolList>;
  try {
    list = JSON.parse(readFileSync(url, 'utf8')) as Partial<GeneratedToolList>;
  } catch (error) {
    return { stale: `cannot read ${url.pathname}: ${messageOf(error)}` };
  }
  if (list.format !== TOOL_LIST_FORMAT) return { stale: `format ${String(list.format)}, expected ${TOOL_LIST_FORMAT}` };
  if (!Array.isArray(list.sources) || !Array.isArray(list.tools) || typeof list.fingerprint !== 'string')
    return { stale: 'malformed' };
  if (!stampsMatch(list, base)) {
    let fingerprint: string;
    try {
      fingerprint = fingerprintOf(list.sources, base);
    } catch (error) {
      return { stale: `a source is gone: ${messageOf(error)}` };
    }
    if (fingerprint !== list.fingerprint) return { stale: 'the tool modules changed since it was generated' };
  }
  const malformed = list.tools.find(
    (entry) =>
      typeof entry?.module !== 'string' ||
      !(TOOLSETS as readonly string[]).includes(entry.toolset) ||
      typeof entry.tool?.name !== 'string',
  );
  if (malformed) return { stale: 'malformed tool entry' };
  return { tools: list.tools };
}
