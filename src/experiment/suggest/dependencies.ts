/**
 * An app's outbound dependencies, from the calls and environment reads of its code: which client
 * libraries it calls (by the callee as written — `httpx.AsyncClient`, `requests.get`, `fetch`,
 * `axios.create`, Go's `http.Get`, `redis.from_url`, `createClient`, `sql.Open`, …), and where
 * each address comes from: a literal URL or host in the call, or a name that an environment
 * variable was read into (`WEATHER_URL = os.environ.get("WEATHER_URL", "http://…")`). An
 * environment variable named like an address (…_URL, …_HOST, …_DSN, …_ADDR) that no client call
 * was seen to use is a dependency too: apps often pass it on through a settings object.
 *
 * Static reading has limits, said in the notes: a client built from a value computed at run time,
 * or called through an instance whose class is not visible here, is found by its address's
 * environment variable or not at all.
 */
import type { CallArgument, CallReport, CallSite } from '../../code/index.js';

export type DependencyKind =
  | 'http'
  | 'redis'
  | 'postgres'
  | 'mysql'
  | 'mongodb'
  | 'amqp'
  | 'kafka'
  | 'memcached'
  | 'grpc';

export interface Dependency {
  name: string;
  kind: DependencyKind;
  client: string;
  env: string | null;
  address: string | null;
  evidence: string[];
}

interface Signature {
  kind: DependencyKind;
  client: string;
  /** Matches the callee as written (a receiver alias like `r.get` does not match: the constructor does). */
  callee: RegExp;
  /** The argument holding the address: by keyword name, else by position. */
  keys: readonly string[];
  position: number;
}

const SIGNATURES: readonly Signature[] = [
  {
    kind: 'http',
    client: 'httpx',
    callee: /^httpx\.(get|post|put|patch|delete|head|options|request|stream|AsyncClient|Client)$/,
    keys: ['base_url', 'url'],
    position: 0,
  },
  {
    kind: 'http',
    client: 'requests',
    callee: /^requests\.(get|post|put|patch|delete|head|options|request)$/,
    keys: ['url'],
    position: 0,
  },
  {
    kind: 'http',
    client: 'aiohttp',
    callee: /^aiohttp\.(ClientSession|request)$/,
    keys: ['base_url', 'url'],
    position: 0,
  },
  { kind: 'http', client: 'urllib', callee: /^(urllib\.request\.)?urlopen$/, keys: ['url'], position: 0 },
  {
    kind: 'http',
    client: 'urllib3',
    callee: /^urllib3\.(HTTPConnectionPool|HTTPSConnectionPool|connection_from_url)$/,
    keys: ['host', 'url'],
    position: 0,
  },
  { kind: 'http', client: 'urllib3', callee: /^urllib3\.request$/, keys: ['url'], position: 1 },
  {
    kind: 'http',
    client: 'fetch',
    callee: /^(globalThis\.|window\.)?fetch$|^nodeFetch$/,
    keys: ['url'],
    position: 0,
  },
  {
    kind: 'http',
    client: 'undici',
    callee: /^undici\.(request|fetch|stream|Pool|Client|Agent)$|^new (undici\.)?(Pool|Client)$/,
    keys: ['url', 'origin'],
    position: 0,
  },
  {
    kind: 'http',
    client: 'superagent',
    callee: /^superagent(\.(get|post|put|patch|delete|del|head|options))?$/,
    keys: ['url'],
    position: 0,
  },
  // request and its forks (@cypress/request, postman-request, requestretry, teeny-request), as imported.
  {
    kind: 'http',
    client: 'request',
    callee: /^(request|requestretry|teenyRequest|postmanRequest)(\.(get|post|put|patch|delete|del|head|defaults))?$/,
    keys: ['url', 'uri', 'baseUrl'],
    position: 0,
  },
  { kind: 'http', client: 'node:http', callee: /^https?\.(request|get)$/, keys: ['url'], position: 0 },
  {
    kind: 'http',
    client: 'axios',
    callee: /^axios(\.(get|post|put|patch|delete|head|options|request|create))?$/,
    keys: ['baseURL', 'url'],
    position: 0,
  },
  {
    kind: 'http',
    client: 'got',
    callee: /^got(\.(get|post|put|patch|delete|head|stream|extend))?$/,
    keys: ['prefixUrl', 'url'],
    position: 0,
  },
  { kind: 'http', client: 'net/http', callee: /^http\.(Get|Post|PostForm|Head)$/, keys: [], position: 0 },
  { kind: 'http', client: 'net/http', callee: /^http\.NewRequest$/, keys: [], position: 1 },
  { kind: 'http', client: 'net/http', callee: /^http\.NewRequestWithContext$/, keys: [], position: 2 },
  { kind: 'http', client: 'java.net.http', callee: /^URI\.create$|^HttpRequest\.newBuilder$/, keys: [], position: 0 },
  {
    kind: 'http',
    client: 'OkHttp',
    callee: /(^|\.)Request\.Builder\(\)\.url$|^HttpUrl\.(parse|get)$/,
    keys: [],
    position: 0,
  },
  { kind: 'http', client: 'reqwest', callee: /^reqwest::(blocking::)?get$/, keys: [], position: 0 },
  {
    kind: 'http',
    client: 'Net::HTTP',
    callee: /^(Net::HTTP\.(get|post|get_response|start)|Faraday\.new|HTTParty\.(get|post))$/,
    keys: ['url'],
    position: 0,
  },
  {
    kind: 'redis',
    client: 'redis',
    callee:
      /^(redis\.|aioredis\.|redis\.asyncio\.)?(Redis|StrictRedis|from_url)$|^Redis\.from_url$|^(redis\.)?createClient$|^Redis$|^IORedis$|^redis\.NewClient$|^redis\.NewClusterClient$/,
    keys: ['url', 'host', 'Addr', 'Addrs'],
    position: 0,
  },
  {
    kind: 'postgres',
    client: 'postgres',
    callee:
      /^(psycopg2?|asyncpg)\.(connect|create_pool)$|^(pgx|pgxpool)\.(Connect|New|ConnectConfig)$|^(pg\.)?Pool$|^postgres$/,
    keys: ['dsn', 'connectionString', 'host'],
    position: 0,
  },
  {
    kind: 'mysql',
    client: 'mysql',
    callee: /^(pymysql|MySQLdb|aiomysql|mysql\.connector)\.connect$|^mysql2?\.(createConnection|createPool)$/,
    keys: ['host', 'uri'],
    position: 0,
  },
  {
    kind: 'mongodb',
    client: 'mongodb',
    callee:
      /^(pymongo\.)?MongoClient$|^(motor\.motor_asyncio\.)?AsyncIOMotorClient$|^mongoose\.connect$|^mongo\.Connect$/,
    keys: ['host', 'uri'],
    position: 0,
  },
  {
    kind: 'amqp',
    client: 'amqp',
    callee: /^pika\.(URLParameters|ConnectionParameters)$|^amqp(lib)?\.connect$|^aio_pika\.connect(_robust)?$/,
    keys: ['url', 'host'],
    position: 0,
  },
  {
    kind: 'kafka',
    client: 'kafka',
    callee: /^(KafkaProducer|KafkaConsumer|AIOKafkaProducer|AIOKafkaConsumer)$|^new?Kafka$/,
    keys: ['bootstrap_servers', 'brokers'],
    position: -1,
  },
  // Only qualified or memcached-specific names: a bare `Client` is also the MCP SDK's, pg's, Elasticsearch's…
  {
    kind: 'memcached',
    client: 'memcached',
    callee:
      /^pymemcache(\.client(\.base|\.hash)?)?\.(Client|HashClient|PooledClient)$|^(HashClient|PooledClient)$|^(memcache|bmemcached)\.Client$|^memcache\.New$/,
    keys: ['server', 'servers'],
    position: 0,
  },
  {
    kind: 'grpc',
    client: 'grpc',
    callee: /^grpc\.(insecure_channel|secure_channel|aio\.insecure_channel|Dial|NewClient)$/,
    keys: ['target'],
    position: 0,
  },
];

/** sql.Open("postgres", dsn): the driver name says which database. */
const SQL_OPEN = /^sql\.Open$/;
/** SQLAlchemy and friends: the URL's scheme says which database. */
const URL_ENGINES = /^(sqlalchemy\.)?(create_engine|create_async_engine)$|^databases\.Database$/;

const SCHEME_KINDS: Record<string, DependencyKind> = {
  http: 'http',
  https: 'http',
  redis: 'redis',
  rediss: 'redis',
  postgres: 'postgres',
  postgresql: 'postgres',
  mysql: 'mysql',
  mongodb: 'mongodb',
  'mongodb+srv': 'mongodb',
  amqp: 'amqp',
  amqps: 'amqp',
  kafka: 'kafka',
  memcached: 'memcached',
  grpc: 'grpc',
};

export const DEFAULT_PORTS: Record<DependencyKind, number> = {
  http: 80,
  redis: 6379,
  postgres: 5432,
  mysql: 3306,
  mongodb: 27017,
  amqp: 5672,
  kafka: 9092,
  memcached: 11211,
  grpc: 50051,
};

const ADDRESS_ENV = /(_URL|_URI|_HOST|_ADDR|_ADDRESS|_DSN|_ENDPOINT|_SERVER|_SERVERS|_BROKERS)$/;

interface Found {
  kind: DependencyKind;
  client: string;
  env: string | null;
  address: string | null;
  evidence: string;
}

export function findDependencies(sources: ReadonlyArray<{ path: string; calls: CallReport }>): {
  dependencies: Dependency[];
  notes: string[];
} {
  const found: Found[] = [];
  const notes: string[] = [];
  const envReads = sources.flatMap((source) => source.calls.envReads.map((read) => ({ ...read, path: source.path })));
  const constants = sources.flatMap((source) => source.calls.constants);
  const usedEnv = new Set<string>();
  for (const source of sources) {
    for (const call of source.calls.calls) {
      const match = classify(call);
      if (!match) continue;
      const { env, address } = resolveAddress(match.argument, envReads, constants);
      if (env) usedEnv.add(env);
      found.push({
        kind: match.kind ?? kindOfAddress(address) ?? 'http',
        client: match.client,
        env,
        address,
        evidence: `${source.path}:${call.line} ${call.callee}`,
      });
    }
  }
  for (const read of envReads) {
    if (usedEnv.has(read.name) || !ADDRESS_ENV.test(read.name)) continue;
    const kind = kindOfAddress(read.fallback ?? null) ?? kindOfName(read.name);
    if (!kind) continue;
    usedEnv.add(read.name);
    found.push({
      kind,
      client: 'configuration',
      env: read.name,
      address: read.fallback ?? null,
      evidence: `${read.path}:${read.line} reads ${read.name}`,
    });
  }
  const dependencies = merge(found);
  if (dependencies.some((dependency) => dependency.address === null))
    notes.push(
      'Some addresses were not in the code (only their environment ' +
        'variable): the mappings use the usual port of their kind on ' +
        '127.0.0.1; put the real host:port there.',
    );
  return { dependencies, notes };
}

function classify(
  call: CallSite,
): { kind: DependencyKind | undefined; client: string; argument: CallArgument | undefined } | undefined {
  if (SQL_OPEN.test(call.callee)) {
    const driver = call.arguments[0]?.literal ?? '';
    const kind: DependencyKind | undefined = /postgres|pgx/.test(driver)
      ? 'postgres'
      : /mysql/.test(driver)
        ? 'mysql'
        : undefined;
    return kind ? { kind, client: `database/sql (${driver})`, argument: call.arguments[1] } : undefined;
  }
  if (URL_ENGINES.test(call.callee))
    return { kind: undefined, client: call.callee.replace(/^.*\./, ''), argument: call.arguments[0] };
  const signature = SIGNATURES.find((candidate) => candidate.callee.test(call.callee));
  if (!signature) return undefined;
  const named = call.arguments.find(
    (argument) => argument.name !== undefined && signature.keys.includes(argument.name),
  );
  const positional = call.arguments.filter((argument) => argument.name === undefined);
  const argument = named ?? (signature.position >= 0 ? positional[signature.position] : undefined);
  return { kind: signature.kind, client: signature.client, argument };
}

function resolveAddress(
  argument: CallArgument | undefined,
  envReads: ReadonlyArray<CallReport['envReads'][number]>,
  constants: CallReport['constants'],
): { env: string | null; address: string | null } {
  if (!argument) return { env: null, address: null };
  if (argument.literal !== undefined && /[.:/]/.test(argument.literal) && !argument.literal.startsWith('{…}'))
    return { env: null, address: argument.literal };
  // A name the address was read into: the env read assigned to it, or an env var named like it.
  for (const ref of argument.refs) {
    const last = ref.split('.').pop()!;
    const read =
      envReads.find((candidate) => candidate.assignedTo === ref || candidate.assignedTo === last) ??
      envReads.find((candidate) => candidate.name.toLowerCase() === last.toLowerCase()) ??
      (argument.text.includes(`"`) || argument.text.includes(`'`)
        ? envReads.find((candidate) => argument.text.includes(candidate.name))
        : undefined);
    if (read) return { env: read.name, address: read.fallback ?? null };
    const constant = constants.find((candidate) => candidate.name === ref || candidate.name === last);
    if (constant && /[.:/]/.test(constant.value)) return { env: null, address: constant.value };
  }
  const inline = envReads.find((candidate) => argument.text.includes(candidate.name));
  if (inline) return { env: inline.name, address: inline.fallback ?? null };
  return { env: null, address: null };
}

export function kindOfAddress(address: string | null): DependencyKind | undefined {
  const scheme = address ? /^([a-z][a-z0-9+.-]*):\/\//i.exec(address)?.[1]?.toLowerCase() : undefined;
  if (!scheme) return undefined;
  return SCHEME_KINDS[scheme] ?? SCHEME_KINDS[scheme.split('+')[0]!];
}

function kindOfName(name: string): DependencyKind | undefined {
  const lower = name.toLowerCase();
  if (lower.includes('redis')) return 'redis';
  if (/postgres|pg_|database|db_/.test(lower)) return 'postgres';
  if (lower.includes('mysql')) return 'mysql';
  if (lower.includes('mongo')) return 'mongodb';
  if (/rabbit|amqp/.test(lower)) return 'amqp';
  if (lower.includes('kafka')) return 'kafka';
  if (lower.includes('memcache')) return 'memcached';
  if (/_url$|_uri$|_endpoint$/.test(lower)) return 'http';
  return undefined;
}

/** One dependency per address (or env var, or client without either), evidence merged; names unique. */
function merge(found: readonly Found[]): Dependency[] {
  const byKey = new Map<string, Dependency>();
  for (const item of found) {
    const key = item.env ?? hostPortOf(item.address, item.kind) ?? `${item.kind}:${item.client}`;
    const existing = byKey.get(key);
    if (existing) {
      if (!existing.evidence.includes(item.evidence) && existing.evidence.length < 10)
        existing.evidence.push(item.evidence);
      existing.address ??= item.address;
      if (existing.client === 'configuration') existing.client = item.client;
      continue;
    }
    byKey.set(key, {
      name: '',
      kind: item.kind,
      client: item.client,
      env: item.env,
      address: item.address,
      evidence: [item.evidence],
    });
  }
  const names = new Set<string>();
  return [...byKey.values()].map((dependency) => {
    let name = nameOf(dependency);
    for (let n = 2; names.has(name); n++) name = `${nameOf(dependency)}-${n}`;
    names.add(name);
    return { ...dependency, name };
  });
}

function nameOf(dependency: Omit<Dependency, 'name'>): string {
  if (dependency.env) {
    const stem = dependency.env
      .replace(ADDRESS_ENV, '')
      .replace(/^(APP|SERVICE)_/, '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '');
    if (stem) return stem.slice(0, 40);
  }
  const host = hostPortOf(dependency.address, dependency.kind)?.split(':')[0];
  if (host && !/^(127\.|localhost$|0\.0\.0\.0$)/.test(host))
    return host
      .split('.')[0]!
      .replace(/[^a-z0-9-]/gi, '-')
      .slice(0, 40);
  return dependency.kind;
}

/** host:port of an address (a URL, a DSN, host:port), with the kind's usual port when none is written. */
export function hostPortOf(address: string | null, kind: DependencyKind): string | undefined {
  if (!address || address.includes('{…}')) return undefined;
  const keywords = keywordHostPort(address);
  if (keywords) return `${keywords.host ?? '127.0.0.1'}:${keywords.port ?? DEFAULT_PORTS[kind]}`;
  try {
    const url = new URL(address.includes('://') ? address : `tcp://${address}`);
    if (!url.hostname) return undefined;
    const port = url.port || (url.protocol === 'https:' ? '443' : String(DEFAULT_PORTS[kind]));
    return `${url.hostname.replace(/^\[|\]$/g, '')}:${port}`;
  } catch {
    return undefined;
  }
}

/** host and port of a keyword DSN (`host=db port=5432 dbname=shop`, `Server=db;Port=3306`) or Go's `@tcp(db:3306)`. */
function keywordHostPort(address: string): { host?: string; port?: string } | undefined {
  const tcp = /@tcp\(([^)]*)\)/.exec(address)?.[1];
  if (tcp !== undefined) {
    const [host, port] = tcp.split(':');
    return { ...(host ? { host } : {}), ...(port ? { port } : {}) };
  }
  if (address.includes('://') || !/^\s*[A-Za-z_]+\s*=/.test(address)) return undefined;
  const value = (key: string): string | undefined =>
    new RegExp(`\\b(?:${key})\\s*=\\s*'?([^\\s;']+)`, 'i').exec(address)?.[1];
  const host = value('host|hostaddr|server');
  const port = value('port');
  return { ...(host && !host.startsWith('/') ? { host } : {}), ...(port && /^\d+$/.test(port) ? { port } : {}) };
}
