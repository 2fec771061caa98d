/**
 * The languages the index took before the code tools did (Kotlin, Swift, Scala, Lua, Elixir,
 * shell): each grammar (grammars/<dir>, pinned by scripts/refresh-grammars.mjs) and our own
 * definitions query, checked on a real file of that language nobody here wrote
 * (test/fixtures/code-languages/README.md says where each comes from and its licence): what is
 * listed, with qualified names and lines, what is extracted, and that the index now cuts the file
 * by definition rather than in line windows.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { chunkSource } from '../src/code/chunk.js';
import { extractFunction, languageByName, languageForPath, listDefinitions } from '../src/code/index.js';
import { LanguageSelection } from '../src/search/languages.js';
import { fixturePath } from './helpers/repo.js';

interface Case {
  file: string;
  language: string;
  /** `kind:qualifiedName@line` of every definition, in order. */
  definitions: string[];
  /** A function to extract, and the first line of its text. */
  extract: [string, string];
}

const CASES: Case[] = [
  {
    file: 'ConstantsService.kt',
    language: 'kotlin',
    definitions: [
      'class:ConstantsService@14',
      'class:ConstantsService.ExecutionEnvironment@26',
      'method:ConstantsService.convertPixelsToDp@92',
    ],
    extract: ['convertPixelsToDp', '    private fun convertPixelsToDp(px: Float, context: Context): Int {'],
  },
  {
    file: 'ConstantsModule.swift',
    language: 'swift',
    definitions: ['class:ConstantsModule@7', 'method:ConstantsModule.definition@10'],
    extract: ['definition', '  public func definition() -> ModuleDefinition {'],
  },
  {
    file: 'App.scala',
    language: 'scala',
    definitions: [
      'class:MyMessage@5',
      'class:MyActor@7',
      'method:MyActor.receive@8',
      'class:App@13',
      'method:App.main@14',
    ],
    extract: ['App.main', '  def main(args: Array[String]): Unit = {'],
  },
  {
    file: 'inspect.lua',
    language: 'lua',
    definitions: [
      'function:smartQuote@38',
      'function:escape@59',
      'function:isIdentifier@65',
      'function:isSequenceKey@69',
      'function:sortKeys@81',
      'function:getSequenceLength@100',
      'function:getNonSequentialKeys@110',
      'function:getToStringResultSafely@120',
      'function:countTableAppearances@130',
      'function:copySequence@149',
      'function:makePath@155',
      'function:processRecursive@164',
      'method:Inspector.puts@196',
      'method:Inspector.down@206',
      'method:Inspector.tabify@212',
      'method:Inspector.alreadyVisited@216',
      'method:Inspector.getId@220',
      'method:Inspector.putKey@231',
      'method:Inspector.putTable@238',
      'method:Inspector.putValue@294',
      'function:inspect.inspect@311',
    ],
    extract: ['Inspector.putKey', 'function Inspector:putKey(k)'],
  },
  {
    file: 'mix_project.ex',
    language: 'elixir',
    definitions: [
      'module:Snyk.MixProject.Mix.Project@3',
      ...[4, 5].map((line) => `function:Snyk.MixProject.Mix.Project.load_mix_project@${line}`),
      'function:Snyk.MixProject.Mix.Project.read_file@26',
      ...[31, 32, 33].map((line) => `function:Snyk.MixProject.Mix.Project.get_lock_file_name@${line}`),
      ...[35, 36].map((line) => `function:Snyk.MixProject.Mix.Project.load_manifest@${line}`),
      ...[46, 47].map((line) => `function:Snyk.MixProject.Mix.Project.get_apps@${line}`),
    ],
    extract: ['read_file', '  defp read_file(path) do'],
  },
  {
    file: 'hwclock.sh',
    language: 'shell',
    definitions: ['function:hwclocksh@22', 'function:hwclocksh.verbose_log_action_msg@30'],
    extract: ['hwclocksh', 'hwclocksh()'],
  },
];

for (const { file, language, definitions, extract } of CASES) {
  test(`${language}: the definitions of ${file} are listed, qualified, and extracted`, async () => {
    const source = readFileSync(fixturePath('code-languages', file), 'utf8');
    assert.equal(languageForPath(file)?.name, language, 'known by its extension');
    const listed = await listDefinitions(source, language);
    assert.deepEqual(
      listed.definitions.map((definition) => `${definition.kind}:${definition.qualifiedName}@${definition.startLine}`),
      definitions,
    );
    const [name, firstLine] = extract;
    const extracted = await extractFunction(source, language, name);
    assert.equal(extracted.full.split('\n')[0], firstLine);
    assert.ok(source.includes(extracted.full), 'the extracted text is the source as written');
  });
}

test("lua: functions bound to a field, to a global, or in an assigned or returned table; not a metatable's", async () => {
  // The shapes wrk's scripts and most modules use, which `function f()` patterns alone missed.
  const source = [
    'local M = {}',
    'M.h = function(a)',
    '  return a',
    'end',
    'handler = function() print(1) end',
    'local t = { k = function() return 2 end, v = 1 }',
    'setmetatable(t, { __index = function() end })',
    'local function outer()',
    '  local x = function() end',
    'end',
    'return { run = function() return 3 end }',
  ].join('\n');
  const listed = await listDefinitions(source, 'lua');
  assert.deepEqual(
    listed.definitions.map((definition) => `${definition.kind}:${definition.qualifiedName}@${definition.startLine}`),
    [
      'function:M.h@2',
      'function:handler@5',
      'method:t.k@6',
      'function:outer@8',
      'function:outer.x@9',
      'function:run@11',
    ],
  );
  assert.equal((await extractFunction(source, 'lua', 'M.h')).body, '  return a');
  assert.equal((await extractFunction(source, 'lua', 'run')).body, 'return 3');
});

test('the index cuts these languages by definition now; SQL alone is still cut in line windows', async () => {
  for (const { file, language, definitions } of CASES) {
    assert.equal(LanguageSelection.parse(language).languageOf(`src/${file}`)?.grammar?.name, language);
    const source = readFileSync(fixturePath('code-languages', file), 'utf8');
    const chunks = await chunkSource(source, { path: file, language: languageByName(language)! });
    assert.ok(
      chunks.some((chunk) => chunk.kind !== 'window' && chunk.kind !== 'toplevel'),
      `${file}: ${definitions.length} definitions, chunks ${chunks.map((chunk) => chunk.kind).join(' ')}`,
    );
  }
  assert.equal(LanguageSelection.parse('sql').languageOf('db/schema.sql')?.grammar, undefined);
  assert.equal(LanguageSelection.parse('all').languageOf('db/schema.sql')?.name, 'sql');
});
