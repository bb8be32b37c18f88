/**
 * SQL Server's LIKE, as ConnectWise (`contains`, `like` in `conditions`) and Autotask (`contains`,
 * `beginsWith`, `endsWith` in a query filter) apply it to text: `%` any run of characters, `_` any one
 * character, `[...]` one character of a set or range, `[^...]` one character outside it; compared
 * case-insensitively (the default collation). Neither vendor documents escaping the value it is given,
 * so a value holding `[` is a pattern, not literal text (LIKE (Transact-SQL), learn.microsoft.com
 * ms179859: "[ ] Any single character within the specified range ([a-f]) or set ([abcdef])").
 */

const escapeRegex = (c: string) => c.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');

/** The regex body of a `[...]` class starting at `pattern[i]` (the `[`), and the index after it; null when unclosed. */
function charClass(pattern: string, i: number): { re: string; next: number } | null {
  let j = i + 1;
  let negate = false;
  if (pattern[j] === '^') { negate = true; j++; }
  const members: string[] = [];
  // A `]` right after the opening bracket is a member, not the end.
  let first = true;
  for (; j < pattern.length; j++) {
    const c = pattern[j];
    if (c === ']' && !first) break;
    first = false;
    if (pattern[j + 1] === '-' && j + 2 < pattern.length && pattern[j + 2] !== ']') {
      const lo = c.toLowerCase();
      const hi = pattern[j + 2].toLowerCase();
      // A reversed range matches nothing.
      if (lo <= hi) members.push(`${escapeRegex(lo)}-${escapeRegex(hi)}`);
      j += 2;
      continue;
    }
    members.push(escapeRegex(c.toLowerCase()));
  }
  if (j >= pattern.length) return null;
  const set = members.join('');
  const re = negate ? `[^${set}]` : set ? `[${set}]` : '(?!)';
  return { re, next: j + 1 };
}

/** A regex body for a LIKE pattern; `anyRun` lists the characters that stand for any run (`%`, and `*` in ConnectWise's `like`). */
function likeBody(pattern: string, anyRun: string): string {
  let out = '';
  for (let i = 0; i < pattern.length;) {
    const c = pattern[i];
    if (anyRun.includes(c)) { out += '.*'; i++; continue; }
    if (c === '_') { out += '.'; i++; continue; }
    if (c === '[') {
      const cls = charClass(pattern, i);
      // An unclosed `[` matches nothing.
      if (!cls) return '(?!)';
      out += cls.re;
      i = cls.next;
      continue;
    }
    out += escapeRegex(c.toLowerCase());
    i++;
  }
  return out;
}

const test = (body: string) => {
  const re = new RegExp(`^${body}$`, 'is');
  return (value: unknown): boolean => value != null && re.test(String(value).toLowerCase());
};

/** `field LIKE pattern` (the whole value). */
export function sqlLike(pattern: string, anyRun = '%'): (value: unknown) => boolean {
  return test(likeBody(pattern, anyRun));
}

/** `field LIKE '%text%'`: what a `contains` search of `text` is at these vendors. */
export function sqlContains(text: string): (value: unknown) => boolean {
  return test(`.*${likeBody(text, '%')}.*`);
}

export function sqlBeginsWith(text: string): (value: unknown) => boolean {
  return test(`${likeBody(text, '%')}.*`);
}

export function sqlEndsWith(text: string): (value: unknown) => boolean {
  return test(`.*${likeBody(text, '%')}`);
}
