// Rewrites the generated fault tables of docs/network.md and docs/http-faults.md from the faults'
// declarations (src/proxy/faults/table.ts). Run after `npm run build`.
import { readFileSync, writeFileSync } from 'node:fs';
import { withFaultTable } from '../dist/src/proxy/faults/table.js';

for (const [file, plane] of [
  ['docs/network.md', 'network'],
  ['docs/http-faults.md', 'http'],
]) {
  const url = new URL(`../${file}`, import.meta.url);
  writeFileSync(url, withFaultTable(readFileSync(url, 'utf8'), plane));
}
