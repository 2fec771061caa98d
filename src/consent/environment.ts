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
 * Variables that make an allowed program load other code or configuration (the dynamic loader,
 * interpreters' start-up hooks, bash's exported functions and trace prompt, git's and npm's
 * configuration, the commands a program hands work to): allowing `node` or a bash script by name
 * must not let a request run other code through NODE_OPTIONS=--require or BASH_FUNC_echo%%. A
 * denylist cannot know every program's variables, so it refuses whole families by prefix and
 * suffix (…PATH, …LIB, …OPTS, …HOME, …COMMAND). Refused in a request unless every program is
 * allowed or a person said yes.
 */
const CODE_LOADING = new RegExp(
  [
    '^(LD_|DYLD_|BASH_FUNC_|GIT_|NODE_|NPM_CONFIG_|YARN_|PYTHON|PERL|RUBY|GEM_|BUNDLE_|JAVA|_JAVA|JDK_|XDG_|SSH_)',
    '(PATH|LIB|OPTS|OPTIONS|FLAGS|HOME|COMMAND|_CMD|ASKPASS|RC|CONFIG|PRELOAD)$',
    '^(ENV|BASH_ENV|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|IFS|SHELL|PAGER|EDITOR|VISUAL|BROWSER|LESSOPEN|LESSCLOSE|TERMINFO)$',
  ].join('|'),
  'i',
);

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
