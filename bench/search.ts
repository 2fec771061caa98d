/**
 * Search quality and indexing cost on real code present on every machine that runs faultline's
 * tests: the Python standard library of `python3` and a package in node_modules (commander).
 *
 * Indexes both with the local embedder (no provider: lexical and symbol channels), then runs a
 * judged query set written for them:
 * - identifier queries: the definition must be the FIRST hit (target >= 95% first);
 * - natural-language queries: one of the relevant definitions in the top 5 (target >= 70%).
 * Prints the rates, each miss with what came first, indexing throughput (chunks/s, target >=
 * 3,000 on the standard library) and peak RSS (target < 300 MB).
 *
 * Run: npx tsc -p . && node dist/bench/search.js [--python-lib DIR]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { makeConfig } from '../src/config.js';
import { indexSourceTree, searchIndex, type SearchHit } from '../src/search/index.js';

/**
 * [query, `path-suffix:symbol` of the definition, or of each when the name is defined in several
 * modules alike]; the path suffix is matched on a segment boundary.
 */
const PYTHON_IDENTIFIERS: Array<[string, string | string[]]> = [
  ['urlencode', 'urllib/parse.py:urlencode'],
  ['urllib.parse.urlencode', 'urllib/parse.py:urlencode'],
  ['HTTPResponse._read_status', 'http/client.py:HTTPResponse._read_status'],
  ['StreamReader.readuntil', 'asyncio/streams.py:StreamReader.readuntil'],
  ['call_later', 'asyncio/base_events.py:BaseEventLoop.call_later'],
  ['call_at', 'asyncio/base_events.py:BaseEventLoop.call_at'],
  ['Task.cancel', 'asyncio/tasks.py:Task.cancel'],
  ['urlsplit', 'urllib/parse.py:urlsplit'],
  ['quote_plus', 'urllib/parse.py:quote_plus'],
  ['parse_qsl', 'urllib/parse.py:parse_qsl'],
  ['json.dumps', 'json/__init__.py:dumps'],
  ['JSONDecoder.raw_decode', 'json/decoder.py:JSONDecoder.raw_decode'],
  ['OrderedDict.move_to_end', 'collections/__init__.py:OrderedDict.move_to_end'],
  ['namedtuple', 'collections/__init__.py:namedtuple'],
  ['Counter.most_common', 'collections/__init__.py:Counter.most_common'],
  ['lru_cache', 'functools.py:lru_cache'],
  ['functools.partial', 'functools.py:partial'],
  ['shutil.copytree', 'shutil.py:copytree'],
  ['rmtree', 'shutil.py:rmtree'],
  ['os.makedirs', 'os.py:makedirs'],
  ['Path.read_text', 'pathlib.py:Path.read_text'],
  ['PurePath.with_suffix', 'pathlib.py:PurePath.with_suffix'],
  ['textwrap.dedent', 'textwrap.py:dedent'],
  ['TextWrapper.wrap', 'textwrap.py:TextWrapper.wrap'],
  ['add_argument', 'argparse.py:_ActionsContainer.add_argument'],
  ['ArgumentParser.parse_args', 'argparse.py:ArgumentParser.parse_args'],
  ['subprocess.run', 'subprocess.py:run'],
  ['Popen.communicate', 'subprocess.py:Popen.communicate'],
  ['check_output', 'subprocess.py:check_output'],
  ['Thread.start', 'threading.py:Thread.start'],
  ['Condition.wait_for', ['threading.py:Condition.wait_for', 'multiprocessing/synchronize.py:Condition.wait_for']],
  ['Queue.put_nowait', ['queue.py:Queue.put_nowait', 'multiprocessing/queues.py:Queue.put_nowait', 'asyncio/queues.py:Queue.put_nowait']],
  ['heapq.heappush', 'heapq.py:heappush'],
  ['nlargest', 'heapq.py:nlargest'],
  ['bisect_left', 'bisect.py:bisect_left'],
  ['deepcopy', 'copy.py:deepcopy'],
  ['dataclass', 'dataclasses.py:dataclass'],
  ['asdict', 'dataclasses.py:asdict'],
  ['contextmanager', 'contextlib.py:contextmanager'],
  ['enter_context', 'contextlib.py:_BaseExitStack.enter_context'],
  ['Logger.exception', 'logging/__init__.py:Logger.exception'],
  ['basicConfig', 'logging/__init__.py:basicConfig'],
  ['Template.substitute', 'string.py:Template.substitute'],
  ['gather', 'asyncio/tasks.py:gather'],
  ['wait_for', 'asyncio/tasks.py:wait_for'],
  ['create_task', ['asyncio/base_events.py:BaseEventLoop.create_task', 'asyncio/tasks.py:create_task', 'asyncio/taskgroups.py:TaskGroup.create_task']],
  ['run_until_complete', 'asyncio/base_events.py:BaseEventLoop.run_until_complete'],
  ['Semaphore.acquire', ['asyncio/locks.py:Semaphore.acquire', 'threading.py:Semaphore.acquire']],
  ['Future.add_done_callback', 'asyncio/futures.py:Future.add_done_callback'],
  ['StreamWriter.drain', 'asyncio/streams.py:StreamWriter.drain'],
  ['SSLContext.wrap_socket', 'ssl.py:SSLContext.wrap_socket'],
  ['create_connection', 'socket.py:create_connection'],
  ['HTTPConnection.request', 'http/client.py:HTTPConnection.request'],
  ['urlopen', 'urllib/request.py:urlopen'],
  ['Request.add_header', 'urllib/request.py:Request.add_header'],
  ['base64.b64encode', 'base64.py:b64encode'],
  ['hmac.new', 'hmac.py:new'],
  ['uuid4', 'uuid.py:uuid4'],
  ['fnmatch.translate', 'fnmatch.py:translate'],
  ['glob.iglob', 'glob.py:iglob'],
  ['tempfile.mkdtemp', 'tempfile.py:mkdtemp'],
  ['NamedTemporaryFile', 'tempfile.py:NamedTemporaryFile'],
  ['csv.DictReader', 'csv.py:DictReader'],
  ['ZipFile.extractall', 'zipfile.py:ZipFile.extractall'],
  ['TarFile.extractall', 'tarfile.py:TarFile.extractall'],
  ['date.strftime', 'datetime.py:date.strftime'],
  ['timedelta.total_seconds', 'datetime.py:timedelta.total_seconds'],
  ['Decimal.quantize', '_pydecimal.py:Decimal.quantize'],
  ['Fraction.limit_denominator', 'fractions.py:Fraction.limit_denominator'],
  ['random.shuffle', 'random.py:Random.shuffle'],
];

/** [query, any of these `path-suffix:symbol` definitions in the top 5]. */
const PYTHON_NATURAL: Array<[string, string[]]> = [
  ['schedule a callback after a delay', ['asyncio/base_events.py:BaseEventLoop.call_later', 'asyncio/base_events.py:BaseEventLoop.call_at', 'asyncio/events.py:AbstractEventLoop.call_later']],
  ['cancel a task', ['asyncio/tasks.py:Task.cancel']],
  ['encode a dict as a URL query string', ['urllib/parse.py:urlencode']],
  ['read data from the stream until a separator is found', ['asyncio/streams.py:StreamReader.readuntil']],
  ['wait for the first of several futures to complete', ['asyncio/tasks.py:wait', 'asyncio/tasks.py:as_completed', 'concurrent/futures/_base.py:wait', 'concurrent/futures/_base.py:as_completed']],
  ['run awaitables concurrently and gather their results', ['asyncio/tasks.py:gather']],
  ['recursively copy a directory tree', ['shutil.py:copytree']],
  ['recursively delete a directory tree', ['shutil.py:rmtree']],
  ['remove common leading whitespace from lines', ['textwrap.py:dedent']],
  ['create a directory and all parent directories', ['os.py:makedirs', 'pathlib.py:Path.mkdir']],
  ['the n largest elements of a dataset', ['heapq.py:nlargest']],
  ['find the insertion point in a sorted list', ['bisect.py:bisect_left', 'bisect.py:bisect_right']],
  ['deep copy of an object', ['copy.py:deepcopy']],
  ['compare two digests in constant time', ['hmac.py:compare_digest']],
  ['generate a random UUID', ['uuid.py:uuid4']],
  ['shuffle a list in place', ['random.py:Random.shuffle']],
  ['convert a glob pattern to a regular expression', ['fnmatch.py:translate']],
  ['create a temporary directory', ['tempfile.py:mkdtemp', 'tempfile.py:TemporaryDirectory']],
  ['decode base64 data', ['base64.py:b64decode', 'base64.py:standard_b64decode', 'base64.py:urlsafe_b64decode']],
  ['parse a query string into a list of name value pairs', ['urllib/parse.py:parse_qsl', 'urllib/parse.py:parse_qs']],
  ['split a URL into its components', ['urllib/parse.py:urlsplit', 'urllib/parse.py:urlparse']],
  ['read the status line of an HTTP response', ['http/client.py:HTTPResponse._read_status']],
  ['open a TCP connection to an address', ['socket.py:create_connection', 'asyncio/streams.py:open_connection', 'asyncio/base_events.py:BaseEventLoop.create_connection']],
  ['acquire a lock with a timeout', ['threading.py:Condition.wait', '_thread', 'threading.py:Semaphore.acquire', 'threading.py:_RLock.acquire']],
  ['run a command and capture its output', ['subprocess.py:run', 'subprocess.py:check_output', 'subprocess.py:getoutput', 'subprocess.py:getstatusoutput']],
  ['wrap text to a given width', ['textwrap.py:wrap', 'textwrap.py:fill', 'textwrap.py:TextWrapper.wrap']],
  ['count hashable items', ['collections/__init__.py:Counter']],
  ['cache the results of a function call', ['functools.py:lru_cache', 'functools.py:cache']],
  ['serialize an object to a JSON formatted string', ['json/__init__.py:dumps', 'json/encoder.py:JSONEncoder.encode']],
  ['extract all members of a zip archive', ['zipfile.py:ZipFile.extractall']],
];

const COMMANDER_IDENTIFIERS: Array<[string, string | string[]]> = [
  ['exitOverride', 'lib/command.js:Command.exitOverride'],
  ['Command.parseAsync', 'lib/command.js:Command.parseAsync'],
  ['requiredOption', 'lib/command.js:Command.requiredOption'],
  ['Option.choices', 'lib/option.js:Option.choices'],
  ['Help.formatHelp', 'lib/help.js:Help.formatHelp'],
  ['suggestSimilar', 'lib/suggestSimilar.js:suggestSimilar'],
  ['Argument.argParser', 'lib/argument.js:Argument.argParser'],
  ['CommanderError', 'lib/error.js:CommanderError'],
  ['addHelpText', 'lib/command.js:Command.addHelpText'],
  ['optsWithGlobals', 'lib/command.js:Command.optsWithGlobals'],
];

const COMMANDER_NATURAL: Array<[string, string[]]> = [
  ['suggest a similar command name for a typo', ['lib/suggestSimilar.js:suggestSimilar', 'lib/suggestSimilar.js:editDistance']],
  ['display an error for an unknown option', ['lib/command.js:Command.unknownOption']],
  ['set the version of the program', ['lib/command.js:Command.version']],
  ['parse options from environment variables', ['lib/command.js:Command._parseOptionsEnv']],
  ['wrap the help text to the terminal width', ['lib/help.js:Help.boxWrap', 'lib/help.js:Help.formatItem', 'lib/help.js:Help.wrap']],
];

interface Corpus {
  name: string;
  dir: string;
  identifiers: Array<[string, string | string[]]>;
  natural: Array<[string, string[]]>;
}

function argument(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
}

function pythonLib(): string {
  return (
    argument('--python-lib') ??
    execFileSync('python3', ['-c', 'import sysconfig; print(sysconfig.get_paths()["stdlib"])'], { encoding: 'utf8' }).trim()
  );
}

/** Whether a hit is `path-suffix:symbol` (the symbol whole, or a fragment of it). */
function matches(hit: SearchHit, expected: string): boolean {
  const colon = expected.lastIndexOf(':');
  const [path, symbol] = [expected.slice(0, colon), expected.slice(colon + 1)];
  const pathOk = hit.relativePath === path || hit.relativePath.endsWith(`/${path}`);
  return pathOk && hit.symbol.replace(/#part\d+$/, '') === symbol;
}

function describe(hit: SearchHit | undefined): string {
  return hit ? `${hit.relativePath}:${hit.symbol}` : '(nothing)';
}

async function main(): Promise<void> {
  const base = mkdtempSync(join(tmpdir(), 'faultline-bench-search-'));
  const settings = { dataDir: join(base, 'data'), llm: makeConfig().llm, env: {} };
  const corpora: Corpus[] = [
    { name: 'python stdlib', dir: pythonLib(), identifiers: PYTHON_IDENTIFIERS, natural: PYTHON_NATURAL },
    { name: 'node_modules/commander', dir: new URL('../../node_modules/commander', import.meta.url).pathname, identifiers: COMMANDER_IDENTIFIERS, natural: COMMANDER_NATURAL },
  ];
  let firstTotal = 0;
  let firstHits = 0;
  let naturalTotal = 0;
  let naturalHits = 0;
  try {
    for (const corpus of corpora) {
      const stats = await indexSourceTree(settings, { sourceDir: corpus.dir });
      console.log(`${corpus.name}: ${stats.files} files, ${stats.chunks} chunks indexed in ${stats.seconds.toFixed(2)} s = ${Math.round(stats.chunks / stats.seconds)} chunks/s (target >= 3000); peak RSS so far ${Math.round(process.resourceUsage().maxRSS / 1024)} MB (target < 300)`);
      let first = 0;
      const times: number[] = [];
      for (const [query, expected] of corpus.identifiers) {
        const started = performance.now();
        const hits = await searchIndex(settings, { query, sourceDir: corpus.dir, limit: 10 });
        times.push(performance.now() - started);
        const accepted = typeof expected === 'string' ? [expected] : expected;
        if (hits[0] && accepted.some((one) => matches(hits[0]!, one))) first++;
        else {
          const rank = hits.findIndex((hit) => accepted.some((one) => matches(hit, one))) + 1;
          console.log(`  miss (identifier) "${query}": ${expected} ranked ${rank || '>10'}; first ${describe(hits[0])}`);
        }
      }
      let top5 = 0;
      for (const [query, relevant] of corpus.natural) {
        const started = performance.now();
        const hits = await searchIndex(settings, { query, sourceDir: corpus.dir, limit: 5 });
        times.push(performance.now() - started);
        if (hits.some((hit) => relevant.some((expected) => matches(hit, expected)))) top5++;
        else console.log(`  miss (natural) "${query}": top 5 ${hits.map(describe).join(', ')}`);
      }
      times.sort((a, b) => a - b);
      console.log(`  identifier queries ranked first: ${first}/${corpus.identifiers.length} = ${((first / corpus.identifiers.length) * 100).toFixed(0)}%`);
      console.log(`  natural-language queries with a relevant hit in the top 5: ${top5}/${corpus.natural.length} = ${((top5 / corpus.natural.length) * 100).toFixed(0)}%`);
      console.log(`  warm search p50 ${times[Math.floor(times.length / 2)]!.toFixed(1)} ms over ${times.length} queries`);
      // One search in a fresh process: loading faultline and the driver, opening the database (the
      // environment the MCP SDK gives servers: NODE_EXTRA_CA_CERTS alone adds ~80 ms to a node start).
      const fresh: number[] = [];
      const bare: number[] = [];
      for (const query of ['urlencode', 'cancel a task', 'read data from the stream until a separator is found']) {
        const script =
          `const {searchIndex}=await import(${JSON.stringify(new URL('../src/search/index.js', import.meta.url).href)});` +
          `await searchIndex(${JSON.stringify(settings)},{query:${JSON.stringify(query)},sourceDir:${JSON.stringify(corpus.dir)},limit:10});`;
        for (let run = 0; run < 3; run++) {
          let started = performance.now();
          execFileSync(process.execPath, ['--input-type=module', '-e', script], { env: getDefaultEnvironment() });
          fresh.push(performance.now() - started);
          started = performance.now();
          execFileSync(process.execPath, ['--input-type=module', '-e', ''], { env: getDefaultEnvironment() });
          bare.push(performance.now() - started);
        }
      }
      fresh.sort((a, b) => a - b);
      bare.sort((a, b) => a - b);
      const median = (values: number[]): number => values[Math.floor(values.length / 2)]!;
      console.log(`  fresh process, one search: median ${median(fresh).toFixed(0)} ms wall; node alone starts in ${median(bare).toFixed(0)} ms, so search adds ${(median(fresh) - median(bare)).toFixed(0)} ms (target < 150)`);
      firstTotal += first;
      firstHits += corpus.identifiers.length;
      naturalTotal += top5;
      naturalHits += corpus.natural.length;
    }
    console.log(`all: identifier-first ${((firstTotal / firstHits) * 100).toFixed(1)}% (target >= 95%), natural-language top-5 ${((naturalTotal / naturalHits) * 100).toFixed(1)}% (target >= 70%), local embedder only`);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

await main();
