/**
 * .gitignore rules, the way git reads them (gitignore(5)), for the tree walker.
 *
 * Each .gitignore applies to the directory it sits in and below. Within a file and across files
 * the last matching rule wins (deeper files come later), and `!pattern` re-includes. As in git, a
 * file inside an ignored directory cannot be re-included: the walker never enters such a directory.
 *
 * Pattern rules: a pattern with a slash before its end is anchored to its .gitignore's directory,
 * one without matches a name at any depth; a trailing slash matches directories only; `*` and `?`
 * stop at slashes, `**` crosses them; `[...]` is a character class; `\` escapes.
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
  // Trailing spaces are dropped unless escaped with a backslash.
  let pattern = line.replace(/(?<!\\)\s+$/, '');
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
  return { regex: new RegExp(anchored ? `^${body}$` : `^(?:.*/)?${body}$`), negate, directoryOnly };
}

function globToRegex(glob: string): string {
  let out = '';
  let i = 0;
  while (i < glob.length) {
    const c = glob[i]!;
    const atSegmentStart = i === 0 || glob[i - 1] === '/';
    if (atSegmentStart && glob.startsWith('**/', i)) {
      out += '(?:.*/)?';
      i += 3;
    } else if (glob.startsWith('/**', i) && i + 3 === glob.length) {
      out += '/.*';
      i += 3;
    } else if (glob.startsWith('**', i)) {
      out += '.*';
      i += 2;
    } else if (c === '*') {
      out += '[^/]*';
      i += 1;
    } else if (c === '?') {
      out += '[^/]';
      i += 1;
    } else if (c === '[') {
      const close = glob.indexOf(']', i + 2);
      if (close === -1) {
        out += '\\[';
        i += 1;
      } else {
        let set = glob.slice(i + 1, close);
        if (set.startsWith('!')) set = `^${set.slice(1)}`;
        out += `[${set.replace(/\\/g, '\\\\')}]`;
        i = close + 1;
      }
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

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
