/**
 * .gitignore rules, the way git reads them (gitignore(5)), for the tree walker.
 *
 * Each .gitignore applies to the directory it sits in and below. Within a file and across files
 * the last matching rule wins (deeper files come later), and `!pattern` re-includes. As in git, a
 * file inside an ignored directory cannot be re-included: the walker never enters such a directory.
 *
 * Pattern rules: a pattern with a slash before its end is anchored to its .gitignore's directory,
 * one without matches a name at any depth; a trailing slash matches directories only; `*` and `?`
 * stop at slashes, `**` as a whole segment crosses them (elsewhere it is a `*`); `[...]` is a
 * character class; `\` escapes. Checked against `git ls-files --others --exclude-standard`.
 */

interface Rule {
  regex: RegExp;
  negate: boolean;
  directoryOnly: boolean;
}

/** The rules of one .gitignore, with the tree-relative POSIX path of its directory ('' for the root). */
export class IgnoreFile {
  private readonly rules: Rule[];

  constructor(
    readonly base: string,
    text: string,
  ) {
    this.rules = text.split(/\r?\n/).flatMap((line) => {
      const rule = parseRule(line);
      return rule ? [rule] : [];
    });
  }

  /**
   * 'ignore' or 'include' when a rule of this file decides about `path` (tree-relative, POSIX),
   * undefined when none matches or the path is outside this file's directory.
   */
  verdict(path: string, isDirectory: boolean): 'ignore' | 'include' | undefined {
    let relative = path;
    if (this.base !== '') {
      if (!path.startsWith(`${this.base}/`)) return undefined;
      relative = path.slice(this.base.length + 1);
    }
    let verdict: 'ignore' | 'include' | undefined;
    for (const rule of this.rules) {
      if (rule.directoryOnly && !isDirectory) continue;
      if (rule.regex.test(relative)) verdict = rule.negate ? 'include' : 'ignore';
    }
    return verdict;
  }
}

/** Whether the stack of .gitignore files (outermost first) ignores `path`. */
export function isIgnored(files: readonly IgnoreFile[], path: string, isDirectory: boolean): boolean {
  let ignored = false;
  for (const file of files) {
    const verdict = file.verdict(path, isDirectory);
    if (verdict !== undefined) ignored = verdict === 'ignore';
  }
  return ignored;
}

function parseRule(line: string): Rule | undefined {
  // Trailing spaces (not tabs) are dropped unless escaped with a backslash.
  let pattern = line.replace(/(?<!\\) +$/, '');
  if (pattern === '' || pattern.startsWith('#')) return undefined;
  let negate = false;
  if (pattern.startsWith('!')) {
    negate = true;
    pattern = pattern.slice(1);
  } else if (pattern.startsWith('\\!') || pattern.startsWith('\\#')) {
    pattern = pattern.slice(1);
  }
  let directoryOnly = false;
  if (pattern.endsWith('/')) {
    directoryOnly = true;
    pattern = pattern.slice(0, -1);
  }
  if (pattern === '') return undefined;
  const anchored = pattern.includes('/');
  if (pattern.startsWith('/')) pattern = pattern.slice(1);
  const body = globToRegex(pattern);
  // A pattern git cannot match (an unclosed `[`) matches nothing, and the file's other rules still apply.
  if (body === undefined) return undefined;
  return { regex: new RegExp(anchored ? `^${body}$` : `^(?:.*/)?${body}$`, 's'), negate, directoryOnly };
}

function globToRegex(glob: string): string | undefined {
  let out = '';
  let i = 0;
  while (i < glob.length) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*') {
      // `**` is special only as a whole segment; elsewhere it is a plain `*`.
      let end = i;
      while (glob[end] === '*') end++;
      const segmentStart = i === 0 || glob[i - 1] === '/';
      if (segmentStart && end === glob.length) out += '.*';
      else if (segmentStart && glob[end] === '/') {
        out += '(?:.*/)?';
        end++;
      } else out += '[^/]*';
      i = end;
    } else if (c === '*') {
      out += '[^/]*';
      i += 1;
    } else if (c === '?') {
      out += '[^/]';
      i += 1;
    } else if (c === '[') {
      const parsed = bracketExpression(glob, i);
      if (parsed === undefined) return undefined;
      out += parsed.regex;
      i = parsed.end;
    } else if (c === '\\' && i + 1 < glob.length) {
      out += escapeRegex(glob[i + 1]!);
      i += 2;
    } else {
      out += escapeRegex(c);
      i += 1;
    }
  }
  return out;
}

const POSIX_CLASSES: Readonly<Record<string, string>> = {
  alnum: 'a-zA-Z0-9',
  alpha: 'a-zA-Z',
  blank: ' \\t',
  cntrl: '\\x00-\\x1f\\x7f',
  digit: '0-9',
  graph: '\\x21-\\x7e',
  lower: 'a-z',
  print: '\\x20-\\x7e',
  punct: '!-\\/:-@\\[-`{-~',
  space: ' \\t\\n\\r\\f\\v',
  upper: 'A-Z',
  xdigit: '0-9a-fA-F',
};

/**
 * `[...]` starting at `start`, as git's wildmatch reads it: `!` or `^` negates, a leading `]` is a
 * member, `a-z` ranges (a reversed one matches nothing), `[:alpha:]` classes, `\` escapes; it never
 * matches a slash. Undefined when it is not closed or names an unknown class: git matches nothing then.
 */
function bracketExpression(glob: string, start: number): { regex: string; end: number } | undefined {
  let i = start + 1;
  const negated = glob[i] === '!' || glob[i] === '^';
  if (negated) i++;
  let members = '';
  let first = true;
  for (;;) {
    if (i >= glob.length) return undefined;
    let c = glob[i]!;
    if (c === ']' && !first) break;
    first = false;
    if (c === '[' && glob[i + 1] === ':') {
      const close = glob.indexOf(':]', i + 2);
      if (close === -1) return undefined;
      const named = POSIX_CLASSES[glob.slice(i + 2, close)];
      if (named === undefined) return undefined;
      members += named;
      i = close + 2;
      continue;
    }
    if (c === '\\') {
      i++;
      if (i >= glob.length) return undefined;
      c = glob[i]!;
    }
    i++;
    if (glob[i] === '-' && glob[i + 1] !== undefined && glob[i + 1] !== ']') {
      let to = glob[i + 1]!;
      i += 2;
      if (to === '\\') {
        if (i >= glob.length) return undefined;
        to = glob[i]!;
        i++;
      }
      if (c <= to) members += `${classMember(c)}-${classMember(to)}`;
      continue;
    }
    members += classMember(c);
  }
  const end = i + 1;
  if (negated) return { regex: `[^/${members}]`, end };
  return { regex: members === '' ? '(?!)' : `(?!/)[${members}]`, end };
}

function classMember(char: string): string {
  return /[\\\]\[^-]/.test(char) ? `\\${char}` : char;
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
