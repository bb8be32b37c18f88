/**
 * The `conditions` query language of ConnectWise lists, e.g.
 *   lastUpdated > [2026-01-01T00:00:00Z] and board/id in (1,2) and summary contains "VPN"
 * Operators `= != < <= > >= contains like in`, each optionally negated with `not` (`not like`,
 * `not in`, `not contains`), `and`/`or` (and binds tighter), parentheses, dates in brackets, strings
 * in double or single quotes, nested fields with `/`. Comparisons of text ignore case, as the SQL
 * Server collation behind ConnectWise does.
 */
import { badRequest } from './errors';
import type { CwRecord } from './store';
import { sqlContains, sqlLike } from '../sql-like';

export type Predicate = (rec: CwRecord) => boolean;

type Value =
  | { kind: 'string'; v: string }
  | { kind: 'number'; v: number }
  | { kind: 'date'; v: number; /** the same instant as a ConnectWise timestamp, when whole seconds */ text: string | null }
  | { kind: 'bool'; v: boolean }
  | { kind: 'null' };

type Token =
  | { t: 'ident'; v: string }
  | { t: 'word'; v: string } // keyword: and or not contains like in true false null
  | { t: 'op'; v: string }
  | { t: 'punct'; v: '(' | ')' | ',' }
  | { t: 'value'; v: Value };

/** ConnectWise's own timestamp format sorts as text: `2026-03-04T15:20:11Z`. */
const isCwTimestamp = (s: string) => s.length === 20 && s.charCodeAt(19) === 90 /* Z */ && s.charCodeAt(10) === 84 /* T */;
const toCwTimestamp = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.000Z$/, 'Z');

const KEYWORDS = new Set(['and', 'or', 'not', 'contains', 'like', 'in', 'true', 'false', 'null']);

function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (/\s/.test(c)) { i++; continue; }
    if (c === '(' || c === ')' || c === ',') { out.push({ t: 'punct', v: c }); i++; continue; }
    if (c === '[') {
      const end = src.indexOf(']', i);
      if (end < 0) throw badRequest('Unterminated date in conditions');
      const text = src.slice(i + 1, end).trim();
      const ms = Date.parse(text);
      if (Number.isNaN(ms)) throw badRequest(`Invalid date [${text}] in conditions`);
      out.push({ t: 'value', v: { kind: 'date', v: ms, text: ms % 1000 === 0 ? toCwTimestamp(ms) : null } });
      i = end + 1;
      continue;
    }
    if (c === '"' || c === "'") {
      let j = i + 1;
      let s = '';
      for (;;) {
        if (j >= src.length) throw badRequest('Unterminated string in conditions');
        if (src[j] === '\\' && j + 1 < src.length) { s += src[j + 1]; j += 2; continue; }
        if (src[j] === c) {
          if (src[j + 1] === c) { s += c; j += 2; continue; } // doubled quote = literal quote
          break;
        }
        s += src[j++];
      }
      out.push({ t: 'value', v: { kind: 'string', v: s } });
      i = j + 1;
      continue;
    }
    const op = /^(>=|<=|!=|<>|=|<|>)/.exec(src.slice(i));
    if (op) { out.push({ t: 'op', v: op[1] === '<>' ? '!=' : op[1] }); i += op[1].length; continue; }
    const num = /^-?\d+(\.\d+)?(?![\w/])/.exec(src.slice(i));
    if (num) { out.push({ t: 'value', v: { kind: 'number', v: Number(num[0]) } }); i += num[0].length; continue; }
    const word = /^[A-Za-z_][\w/.]*/.exec(src.slice(i));
    if (word) {
      const lower = word[0].toLowerCase();
      if (lower === 'true' || lower === 'false') out.push({ t: 'value', v: { kind: 'bool', v: lower === 'true' } });
      else if (lower === 'null') out.push({ t: 'value', v: { kind: 'null' } });
      else if (KEYWORDS.has(lower)) out.push({ t: 'word', v: lower });
      else out.push({ t: 'ident', v: word[0] });
      i += word[0].length;
      continue;
    }
    throw badRequest(`Unexpected character '${c}' in conditions at position ${i}`);
  }
  return out;
}

/**
 * A compiled field reader (conditions run over every record of a list, so split the path once): `board/id`
 * walks nested objects; a name the record lacks at the top level is looked up in `_info` (ConnectWise lets
 * `lastUpdated` stand for `_info/lastUpdated`).
 */
export function fieldGetter(path: string): (rec: CwRecord) => unknown {
  const parts = path.split(/[/.]/);
  const head = parts[0];
  return (rec) => {
    let cur: unknown = rec;
    if (!(head in rec) && rec._info && head in rec._info) cur = rec._info;
    for (const p of parts) {
      if (cur == null || typeof cur !== 'object') return undefined;
      cur = (cur as Record<string, unknown>)[p];
    }
    return cur;
  };
}

function compare(field: unknown, op: string, value: Value): boolean {
  if (value.kind === 'null') {
    if (op === '=') return field == null;
    if (op === '!=') return field != null;
    return false;
  }
  if (field == null) return op === '!=';
  let cmp: number;
  switch (value.kind) {
    case 'date': {
      if (typeof field !== 'string') return false;
      // Fast path: whole-second condition dates compare as text with ConnectWise timestamps.
      if (value.text !== null && isCwTimestamp(field)) {
        cmp = field < value.text ? -1 : field > value.text ? 1 : 0;
        break;
      }
      const ms = Date.parse(field);
      if (Number.isNaN(ms)) return false;
      cmp = ms - value.v;
      break;
    }
    case 'number': {
      // No global lookups (Number, String) in this per-record path: they are slow in a vm context.
      const n = typeof field === 'number' ? field : +(field as string);
      if (n !== n) return false; // NaN
      cmp = n - value.v;
      break;
    }
    case 'bool':
      cmp = field === value.v || ('' + field).toLowerCase() === (value.v ? 'true' : 'false') ? 0 : 1;
      if (op !== '=' && op !== '!=') return false;
      break;
    case 'string': {
      const a = ('' + field).toLowerCase();
      const b = value.v.toLowerCase();
      cmp = a === b ? 0 : a < b ? -1 : 1;
      break;
    }
  }
  switch (op) {
    case '=': return cmp === 0;
    case '!=': return cmp !== 0;
    case '<': return cmp < 0;
    case '<=': return cmp <= 0;
    case '>': return cmp > 0;
    case '>=': return cmp >= 0;
    default: return false;
  }
}

class Parser {
  private pos = 0;
  constructor(private readonly tokens: Token[], private readonly checkField: (path: string) => void) {}

  parse(): Predicate {
    const p = this.orExpr();
    if (this.pos < this.tokens.length) throw badRequest('Unexpected token in conditions');
    return p;
  }

  private peek(): Token | undefined {
    return this.tokens[this.pos];
  }
  private isWord(w: string): boolean {
    const t = this.peek();
    return t?.t === 'word' && t.v === w;
  }
  private expectPunct(p: '(' | ')' | ','): void {
    const t = this.tokens[this.pos++];
    if (t?.t !== 'punct' || t.v !== p) throw badRequest(`Expected '${p}' in conditions`);
  }
  private value(): Value {
    const t = this.tokens[this.pos++];
    if (t?.t !== 'value') throw badRequest('Expected a value in conditions');
    return t.v;
  }

  private orExpr(): Predicate {
    const parts = [this.andExpr()];
    while (this.isWord('or')) { this.pos++; parts.push(this.andExpr()); }
    return parts.length === 1 ? parts[0] : (r) => parts.some((p) => p(r));
  }
  private andExpr(): Predicate {
    const parts = [this.unary()];
    while (this.isWord('and')) { this.pos++; parts.push(this.unary()); }
    return parts.length === 1 ? parts[0] : (r) => parts.every((p) => p(r));
  }
  private unary(): Predicate {
    if (this.isWord('not')) { this.pos++; const inner = this.unary(); return (r) => !inner(r); }
    const t = this.peek();
    if (t?.t === 'punct' && t.v === '(') {
      this.pos++;
      const inner = this.orExpr();
      this.expectPunct(')');
      return inner;
    }
    return this.comparison();
  }
  private comparison(): Predicate {
    const t = this.tokens[this.pos++];
    if (t?.t !== 'ident') throw badRequest('Expected a field name in conditions');
    const field = t.v;
    this.checkField(field);
    const get = fieldGetter(field);
    let negate = false;
    if (this.isWord('not')) { this.pos++; negate = true; }
    const opTok = this.tokens[this.pos++];
    let test: Predicate;
    if (opTok?.t === 'op' && !negate) {
      const v = this.value();
      test = (r) => compare(get(r), opTok.v, v);
    } else if (opTok?.t === 'word' && opTok.v === 'contains') {
      const v = this.value();
      // A LIKE '%value%' at ConnectWise: `[` in the value opens a character class (sql-like.ts).
      const matches = sqlContains(v.kind === 'string' ? v.v : String('v' in v ? v.v : ''));
      test = (r) => matches(get(r));
    } else if (opTok?.t === 'word' && opTok.v === 'like') {
      const v = this.value();
      // ConnectWise's `like` takes `*` as well as `%` for any run of characters.
      const matches = sqlLike(v.kind === 'string' ? v.v : String('v' in v ? v.v : ''), '%*');
      test = (r) => matches(get(r));
    } else if (opTok?.t === 'word' && opTok.v === 'in') {
      this.expectPunct('(');
      const values = [this.value()];
      while (this.peek()?.t === 'punct' && (this.peek() as { v: string }).v === ',') { this.pos++; values.push(this.value()); }
      this.expectPunct(')');
      test = (r) => { const f = get(r); return values.some((v) => compare(f, '=', v)); };
    } else {
      throw badRequest(`Expected an operator after ${field} in conditions`);
    }
    return negate ? (r) => !test(r) : test;
  }
}

/**
 * Compiles a `conditions` string to a predicate; a malformed string is a 400 BadRequest. `checkField`
 * throws for a field name the resource does not have (see schema.ts).
 */
export function parseConditions(src: string | undefined, checkField: (path: string) => void = () => undefined): Predicate | null {
  if (!src || !src.trim()) return null;
  return new Parser(tokenize(src), checkField).parse();
}
