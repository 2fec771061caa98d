/**
 * The listings of many real files, written as JSON lines, to compare two builds of src/code byte
 * for byte: a change meant to make listing faster (a query that captures more, a question answered
 * from the text instead of tree-sitter) must leave every listing as it was.
 *
 *   node dist/bench/code-listings.js files LIST [ROOT...]   picks real files under the ROOTs (default:
 *                                                           node_modules, /usr/lib/python3*, /usr/include,
 *                                                           /usr/share, test/fixtures), up to 300 per language
 *   node dist/bench/code-listings.js list LIST OUT          lists each file of LIST into OUT
 *
 * To compare: copy the build before the change aside with the grammars (`mkdir /tmp/before && cp -r
 * dist grammars package.json /tmp/before && ln -s "$PWD/node_modules" /tmp/before/`), run
 * `node /tmp/before/dist/bench/code-listings.js list LIST before.jsonl`, then this build's into
 * after.jsonl, and `cmp before.jsonl after.jsonl`.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { languageForPath, listDefinitions } from '../src/code/index.js';
import { byCodeUnits } from '../src/order.js';
import { repoRoot } from '../test/helpers/repo.js';

const PER_LANGUAGE = 300;
const MAX_FILE_BYTES = 600_000;

function defaultRoots(): string[] {
  const python = readdirSync('/usr/lib', { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && /^python3\.\d+$/.test(entry.name))
    .map((entry) => join('/usr/lib', entry.name));
  return [join(repoRoot, 'node_modules'), ...python, '/usr/include', '/usr/share', join(repoRoot, 'test/fixtures')];
}

/** Every regular file under `root` (symbolic links followed, `.git` skipped) whose extension a language takes. */
function walk(root: string, found: Map<string, string[]>, seen: Set<string>): void {
  let entries;
  try {
    entries = readdirSync(root, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    const path = join(root, entry.name);
    if (entry.name === '.git') continue;
    let info;
    try {
      info = statSync(path);
    } catch {
      continue;
    }
    const key = `${info.dev}:${info.ino}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (info.isDirectory()) walk(path, found, seen);
    else if (info.isFile() && info.size <= MAX_FILE_BYTES) {
      const language = languageForPath(path)?.name;
      if (language !== undefined) found.set(language, [...(found.get(language) ?? []), path]);
    }
  }
}

/** Up to PER_LANGUAGE files of each language, evenly spread over its sorted paths. */
function pickFiles(roots: string[]): string[] {
  const found = new Map<string, string[]>();
  const seen = new Set<string>();
  for (const root of roots) walk(root, found, seen);
  const picked: string[] = [];
  for (const [, paths] of [...found].sort(([a], [b]) => byCodeUnits(a, b))) {
    const sorted = paths.sort(byCodeUnits);
    const step = Math.max(1, Math.floor(sorted.length / PER_LANGUAGE));
    picked.push(...sorted.filter((_, index) => index % step === 0).slice(0, PER_LANGUAGE));
  }
  return picked;
}

async function listAll(listPath: string, outPath: string): Promise<void> {
  const files = readFileSync(listPath, 'utf8').split('\n').filter(Boolean);
  const lines: string[] = [];
  const started = process.cpuUsage();
  for (const path of files) {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      continue;
    }
    const info = languageForPath(path, text);
    if (!info) continue;
    let result: unknown;
    try {
      result = await listDefinitions(text, info);
    } catch (error) {
      result = { error: String(error) };
    }
    lines.push(JSON.stringify({ path, result }));
  }
  const used = process.cpuUsage(started);
  writeFileSync(outPath, `${lines.join('\n')}\n`);
  process.stderr.write(`${lines.length} files listed, ${((used.user + used.system) / 1000).toFixed(0)} ms CPU\n`);
}

const [command, listPath, ...rest] = process.argv.slice(2);
if (command === 'files' && listPath) {
  const picked = pickFiles(rest.length > 0 ? rest : defaultRoots());
  writeFileSync(listPath, `${picked.join('\n')}\n`);
  process.stderr.write(`${picked.length} files\n`);
} else if (command === 'list' && listPath && rest[0]) {
  await listAll(listPath, rest[0]);
} else {
  process.stderr.write('usage: code-listings.js files LIST [ROOT...] | list LIST OUT\n');
  process.exitCode = 2;
}
