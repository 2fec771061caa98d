/**
 * Generates dist/src/tools/tool-list.json (see tool-list.ts): registers every tool family of every
 * toolset on a throwaway server, publishes tools/list exactly as a live server would, and records
 * the modules it came from. `npm run build` runs it after tsc:
 *
 *   node dist/src/tools/tool-list-writer.js [OUT.json]
 *
 * Never loaded by the server itself.
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { FileAccess } from '../access.js';
import { TOOLSETS, makeConfig } from '../config.js';
import { silentLogger } from '../log.js';
import { ToolRegistry } from './define.js';
import { registerAllTools } from './index.js';
import {
  SOURCES_BASE,
  TOOL_LIST_FORMAT,
  TOOL_LIST_URL,
  fingerprintOf,
  stampsOf,
  type GeneratedToolList,
} from './tool-list.js';

/**
 * The list a live server with every toolset publishes (the opt-in ones too: a server offers the
 * part its --toolsets name), with what it was built from.
 */
export async function generateToolList(base: URL = SOURCES_BASE): Promise<GeneratedToolList> {
  const config = makeConfig({ toolsets: [...TOOLSETS] });
  const tools = new ToolRegistry(new McpServer({ name: 'faultline', version: '0' }), silentLogger, TOOLSETS);
  const modules = new Map<string, string>();
  await registerAllTools(
    tools,
    { config, access: new FileAccess(config.roots), log: silentLogger },
    (module, names) => {
      for (const name of names) modules.set(name, module);
    },
  );
  const sources = staticClosure(base);
  return {
    format: TOOL_LIST_FORMAT,
    fingerprint: fingerprintOf(sources, base),
    sources,
    stamps: stampsOf(sources, base),
    tools: tools.listed().map(({ toolset, tool }) => ({ module: modules.get(tool.name)!, toolset, tool })),
  };
}

export async function writeToolList(out: URL = TOOL_LIST_URL): Promise<GeneratedToolList> {
  const list = await generateToolList();
  writeFileSync(out, `${JSON.stringify(list)}\n`);
  return list;
}

/** Matches a static import or re-export of a relative module (never `import(…)`) in tsc's output. */
const STATIC_IMPORT = /^\s*(?:import|export)\s(?:[^'";]*?\sfrom\s*)?['"](\.{1,2}\/[^'"]+)['"]/gm;

/**
 * Every compiled module in tools/ and, transitively, every module of ours they import statically
 * (the leaf modules whose names and limits the schemas quote), relative to `base`, sorted. Dynamic
 * imports are left out: they are the handlers' domain code, which tools/list never sees.
 */
export function staticClosure(base: URL = SOURCES_BASE): string[] {
  const toolsDir = new URL('tools/', base);
  const pending = readdirSync(toolsDir)
    .filter((file) => file.endsWith('.js'))
    .map((file) => `tools/${file}`);
  const seen = new Set<string>();
  while (pending.length > 0) {
    const source = pending.pop()!;
    if (seen.has(source)) continue;
    seen.add(source);
    const url = new URL(source, base);
    for (const match of readFileSync(url, 'utf8').matchAll(STATIC_IMPORT)) {
      const target = new URL(match[1]!, url);
      pending.push(target.href.slice(base.href.length));
    }
  }
  return [...seen].sort();
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const out = process.argv[2] ? pathToFileURL(process.argv[2]) : TOOL_LIST_URL;
  const list = await writeToolList(out);
  process.stderr.write(
    `tool list: ${list.tools.length} tools from ${list.sources.length} modules → ${fileURLToPath(out)}\n`,
  );
}
