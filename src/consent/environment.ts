/**
 * The environment of a program started for an MCP client: a minimal base taken from the server's
 * own (what finds programs, the user's home and language, the time zone and temp directory) plus
 * what the request itself asks for. Nothing else of the server's environment goes along: its
 * tokens (FAULTLINE_TOKEN, FAULTLINE_ADMIN_TOKEN), the LLM keys (OPENAI_API_KEY…), cloud
 * credentials (AWS_*) and whatever else its owner exported are the owner's, not the agent's.
 */

/** The variables of the server's environment a started program inherits. */
export const BASE_VARIABLES = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'LC_MESSAGES',
  'TZ',
  'TMPDIR',
  'TERM',
] as const;

/**
 * Variables that make an allowed program load other code (the dynamic loader, interpreters'
 * start-up hooks): allowing `node` by name must not let a request run any script through
 * NODE_OPTIONS=--require. Refused in a request unless every program is allowed or a person said yes.
 */
const CODE_LOADING =
  /^(LD_|DYLD_)|^(NODE_OPTIONS|NODE_PATH|BASH_ENV|ENV|PYTHONSTARTUP|PYTHONPATH|PYTHONHOME|PERL5OPT|PERL5LIB|RUBYOPT|RUBYLIB|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|GIT_EXEC_PATH|PATH)$/;

/** The first variable of `requested` that would make the program load other code, if any. */
export function codeLoadingVariable(requested: Readonly<Record<string, string>>): string | undefined {
  return Object.keys(requested).find((name) => CODE_LOADING.test(name));
}

/** The base (BASE_VARIABLES of `from`) and the requested variables over it. */
export function minimalEnvironment(
  requested: Readonly<Record<string, string>> = {},
  from: NodeJS.ProcessEnv = process.env,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of BASE_VARIABLES) if (from[name] !== undefined) env[name] = from[name];
  return { ...env, ...requested };
}
