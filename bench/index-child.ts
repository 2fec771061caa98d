/**
 * One indexing run through the module API in a process of its own (bench/index.ts spawns it), so
 * that its peak RSS is this run's alone: indexes the tree, then again unchanged, and prints
 * `{chunks, seconds, again, peakKb}` as JSON.
 *
 * Run: node dist/bench/index-child.js REPO_ROOT TREE DATA_DIR (REPO_ROOT: a checkout with dist/ built)
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [root, tree, dataDir] = process.argv.slice(2) as [string, string, string];
const load = (path: string) => import(pathToFileURL(join(root, 'dist', 'src', path)).href);
const { indexSourceTree } = await load('search/index.js');
const { makeConfig } = await load('config.js');
const settings = { dataDir, llm: makeConfig().llm, env: {} };
const first = await indexSourceTree(settings, { sourceDir: tree });
const peakKb = process.resourceUsage().maxRSS;
const again = await indexSourceTree(settings, { sourceDir: tree });
process.stdout.write(
  `${JSON.stringify({ chunks: first.chunks, seconds: first.seconds, again: again.seconds, againEmbedded: again.embedded, peakKb })}\n`,
);
