/**
 * The README's table of tools is the tool list the build generates: a tool added, removed,
 * renamed or given a new required argument without `npm run docs:tools` fails here.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  README_URL,
  TABLE_END,
  TABLE_START,
  currentToolsTable,
  readListedTools,
  renderToolsTable,
  withToolsTable,
} from '../scripts/docs-tools.js';

test("README.md's tools table equals the one generated from the tool list", () => {
  const readme = readFileSync(README_URL, 'utf8');
  const current = currentToolsTable(readme);
  assert.ok(current, `README.md has no tools table between "${TABLE_START}" and "${TABLE_END}"`);
  assert.equal(current, renderToolsTable(readListedTools()), 'README.md is out of date: run npm run docs:tools');
});

test('the table has one row per listed tool, grouped by toolset, and changes when a tool is added', () => {
  const tools = readListedTools();
  const table = renderToolsTable(tools);
  const rows = table.split('\n').filter((line) => line.startsWith('| `'));
  assert.equal(rows.length, tools.length);
  for (const { tool } of tools) assert.ok(table.includes(`| \`${tool.name}\` |`), tool.name);
  const toolsets = rows.map((row) => row.split('|')[1]!.trim());
  assert.deepEqual(
    toolsets,
    [...toolsets].sort((a, b) => toolsets.indexOf(a) - toolsets.indexOf(b)),
    'rows of one toolset are together',
  );
  assert.ok(
    rows.some((row) => row.includes('(opt-in)')),
    'the opt-in toolset is marked',
  );

  const added = [
    ...tools,
    { module: 'code', toolset: 'code' as const, tool: { ...tools[0]!.tool, name: 'fault_new_tool' } },
  ];
  assert.notEqual(renderToolsTable(added), table);
  const readme = `intro\n${table}\noutro\n`;
  assert.equal(withToolsTable(readme, table), readme);
  assert.notEqual(withToolsTable(readme, renderToolsTable(added)), readme);
  assert.throws(() => withToolsTable('no markers', table), /no tools table/);
});
