/**
 * The docs stay what a newcomer can trust: README.md a landing page and ARCHITECTURE.md a map
 * within their lengths, the map naming every folder of src/ and no folder that is gone, every
 * relative link pointing at a file of the repository, and nothing citing a document the
 * repository does not hold.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const read = (path: string): string => readFileSync(join(repoRoot, path), 'utf8');
const lines = (text: string): number => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
const docPages = (): string[] =>
  readdirSync(join(repoRoot, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);

function srcFolders(dir = 'src'): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(repoRoot, dir), { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const path = `${dir}/${entry.name}`;
    out.push(path, ...srcFolders(path));
  }
  return out;
}

test('README.md is at most 250 lines and ARCHITECTURE.md at most 200', () => {
  assert.ok(lines(read('README.md')) <= 250, `README.md has ${lines(read('README.md'))} lines`);
  assert.ok(lines(read('ARCHITECTURE.md')) <= 200, `ARCHITECTURE.md has ${lines(read('ARCHITECTURE.md'))} lines`);
});

test('ARCHITECTURE.md names every folder of src/, and every folder it names exists', () => {
  const map = read('ARCHITECTURE.md');
  const folders = srcFolders();
  // A folder is named by its path under src/ (`proxy/http/`), or by its last segment in the
  // diagram under its parent's column (`http/`).
  const unnamed = folders.filter((path) => {
    const relative = path.slice('src/'.length);
    const last = relative.split('/').pop()!;
    return !map.includes(`${relative}/`) && !map.includes(`${last}/`);
  });
  assert.deepEqual(unnamed, [], 'src/ folders the map does not name');
  const named = [...map.matchAll(/`(?:src\/)?([a-z][a-z0-9-]*(?:\/[a-z][a-z0-9-]*)*)\/`/g)].map((m) => m[1]!);
  // A name may be relative to the module it is described in (`faults/` inside `proxy/`).
  const exists = (path: string): boolean =>
    existsSync(join(repoRoot, path)) || folders.some((folder) => `${folder}/`.endsWith(`/${path}/`));
  const missing = named.filter((path) => !exists(path));
  assert.deepEqual(missing, [], 'folders the map names that do not exist');
});

test('relative links in README.md, ARCHITECTURE.md and docs/ point at files of the repository', () => {
  const broken: string[] = [];
  for (const page of ['README.md', 'ARCHITECTURE.md', ...docPages()]) {
    for (const match of read(page).matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = match[1]!.split('#')[0]!;
      if (target === '' || /^[a-z]+:/i.test(target)) continue;
      const path = resolve(repoRoot, dirname(page), target);
      if (!path.startsWith(repoRoot) || !existsSync(path)) broken.push(`${page}: ${match[1]}`);
    }
  }
  assert.deepEqual(broken, []);
});

test('the docs cite nothing outside the repository: no design document, anchors, issues or notes', () => {
  const forbidden = [/\.\.\/shared/, /(^|[^/])DESIGN\.md/, /anchors? §/i, /\bissue #?\d+/i, /docs\/notes\//];
  const found: string[] = [];
  for (const page of ['README.md', 'ARCHITECTURE.md', ...docPages()]) {
    read(page)
      .split('\n')
      .forEach((line, index) => {
        for (const pattern of forbidden) if (pattern.test(line)) found.push(`${page}:${index + 1}: ${line.trim()}`);
      });
  }
  assert.deepEqual(found, []);
  assert.equal(
    existsSync(join(repoRoot, 'docs', 'notes')) && statSync(join(repoRoot, 'docs', 'notes')).isDirectory(),
    false,
    'docs/notes/ is folded into the pages',
  );
});

test("docs/experiments.md's walk-through shows examples/experiment/weather.yaml as shipped", () => {
  const page = read('docs/experiments.md');
  const shown = /`examples\/experiment\/weather\.yaml`[^\n]*\n\n```yaml\n([\s\S]*?)```/.exec(page)?.[1];
  assert.ok(shown, 'the walk-through shows weather.yaml in a yaml block');
  // The page leaves the description out: the file's `description: >` and its indented lines.
  const shipped = read('examples/experiment/weather.yaml').replace(/^description:.*\n(?:[ \t]+.*\n)*/m, '');
  assert.equal(shown, shipped);
  const port = /proxies: \["(\d+)=/.exec(shipped)![1];
  const said = [...page.matchAll(/experiment's proxy on port (\d+)/g)].map((m) => m[1]);
  assert.ok(said.length > 0, "the walk-through names the proxy's port");
  assert.deepEqual(
    said,
    said.map(() => port),
    "the port the walk-through names is the example's",
  );
});
