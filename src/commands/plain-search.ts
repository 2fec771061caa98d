/**
 * A plain `faultline search`: the query and at most `--dir`, `--limit` and `--json`, with no
 * variable in the environment that a flag stands for. cli.ts runs such a search without loading
 * commander and the other commands (search-action.ts), which is most of a fresh process's start-up
 * besides the search itself; anything else (help, another flag, a value to check, a flag's
 * variable set) goes through commander (index-command.ts), which gives the same result for a plain
 * search (test/plain-search.test.ts compares them). No imports: cli.ts loads this on every start.
 */

export interface PlainSearch {
  query: string;
  dir?: string | undefined;
  limit?: number | undefined;
  json: boolean;
}

/**
 * The variables the commander path would read: every flag's variable is FAULT_* (the LLM and log
 * flags), and configFrom checks the FAULTLINE_ALLOW_* policy variables. Blank ones count as unset
 * there too (faultline-command.ts).
 */
const READ_BY_FLAGS = /^(FAULT_|FAULTLINE_ALLOW_)/;

/** `argv` as process.argv gives it; undefined unless it is a plain search. */
export function plainSearch(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): PlainSearch | undefined {
  if (argv[2] !== 'search') return undefined;
  if (Object.keys(env).some((name) => READ_BY_FLAGS.test(name) && env[name]!.trim() !== '')) return undefined;
  const found: Partial<PlainSearch> & { json: boolean } = { json: false };
  const args = argv.slice(3);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('-')) {
      if (found.query !== undefined) return undefined;
      found.query = arg;
      continue;
    }
    if (arg === '--json' && !found.json) {
      found.json = true;
      continue;
    }
    const [flag, inline] = arg.includes('=')
      ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)]
      : [arg];
    const value = inline ?? args[++i];
    if (value === undefined) return undefined;
    if (flag === '--dir' && found.dir === undefined && value !== '' && !value.startsWith('-')) found.dir = value;
    else if (flag === '--limit' && found.limit === undefined && /^[1-9]\d{0,5}$/.test(value))
      found.limit = Number(value);
    else return undefined;
  }
  return found.query === undefined ? undefined : (found as PlainSearch);
}
