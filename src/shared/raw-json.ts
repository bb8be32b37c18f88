/**
 * A JSON value kept as text: a stored record as the store wrote it, with its vendor payload (the read
 * path, records.service.ts). The read path does not parse it: REST splices the text into the answer (it
 * is the whole answer of a list, and this is the hot path); GraphQL parses the operation's result before
 * its resolvers read fields (`parsedRawJson`), MCP parses the finished answer once (`toPlainJson`).
 */
import { randomBytes } from 'node:crypto';

export class RawJson {
  constructor(readonly text: string) {}
  value(): unknown {
    return JSON.parse(this.text);
  }
}

// A per-process nonce, so that no vendor string can pass for a placeholder.
const NONCE = randomBytes(6).toString('hex');
const PLACEHOLDER = new RegExp(`"\\\\u0001${NONCE}:(\\d+)\\\\u0001"`, 'g');

/** JSON.stringify of `value` with a placeholder for each RawJson, and their texts in order. */
function withPlaceholders(value: unknown): { out: string; texts: string[] } {
  const texts: string[] = [];
  const out = JSON.stringify(value, (_k, v) => {
    if (v instanceof RawJson) {
      texts.push(v.text);
      return `\u0001${NONCE}:${texts.length - 1}\u0001`;
    }
    return v;
  });
  return { out, texts };
}

/** JSON text of `value`, with every RawJson written as its own text. */
export function toJsonText(value: unknown): string {
  const { out, texts } = withPlaceholders(value);
  if (texts.length === 0) return out;
  return out.replace(PLACEHOLDER, (_m, i: string) => texts[Number(i)]);
}

/**
 * The UTF-8 JSON of `value` (what toJsonText writes), for an answer body: the pieces between RawJsons
 * and each RawJson's text are encoded straight into one buffer of the answer's size, never joined into
 * one long string first (for a page of records that halves the time spent writing it).
 */
export function toJsonBuffer(value: unknown): Buffer {
  const { out, texts } = withPlaceholders(value);
  if (texts.length === 0) return Buffer.from(out, 'utf8');
  const pieces: string[] = [];
  let from = 0;
  for (const m of out.matchAll(PLACEHOLDER)) {
    pieces.push(out.slice(from, m.index), texts[Number(m[1])]);
    from = m.index + m[0].length;
  }
  pieces.push(out.slice(from));
  let size = 0;
  for (const p of pieces) size += Buffer.byteLength(p, 'utf8');
  const body = Buffer.allocUnsafe(size);
  let at = 0;
  for (const p of pieces) at += body.write(p, at, 'utf8');
  return body;
}

/** A plain JSON value of `value` (RawJson parsed). */
export function toPlainJson<T = unknown>(value: unknown): T {
  return JSON.parse(toJsonText(value)) as T;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object') return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** `value` with every RawJson in it parsed (a copy of what holds one; the rest as it is). */
export function parsedRawJson(value: unknown): unknown {
  if (value instanceof RawJson) return value.value();
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v = parsedRawJson(value[i]);
      if (v !== value[i]) (out ??= value.slice())[i] = v;
    }
    return out ?? value;
  }
  if (isPlainObject(value)) {
    let out: Record<string, unknown> | undefined;
    for (const k of Object.keys(value)) {
      const v = parsedRawJson(value[k]);
      if (v !== value[k]) (out ??= { ...value })[k] = v;
    }
    return out ?? value;
  }
  return value;
}
