/**
 * A vendor payload kept as the JSON text the store holds. The read path does not parse it: REST
 * splices the text into the answer (it is the bulk of every record and this is the hot path), GraphQL's
 * payload scalars parse it only when the field is asked for, MCP parses the finished answer once.
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

/** JSON text of `value`, with every RawJson written as its own text. */
export function toJsonText(value: unknown): string {
  const texts: string[] = [];
  const out = JSON.stringify(value, (_k, v) => {
    if (v instanceof RawJson) {
      texts.push(v.text);
      return `\u0001${NONCE}:${texts.length - 1}\u0001`;
    }
    return v;
  });
  if (texts.length === 0) return out;
  return out.replace(PLACEHOLDER, (_m, i: string) => texts[Number(i)]);
}

/** A plain JSON value of `value` (RawJson parsed). */
export function toPlainJson<T = unknown>(value: unknown): T {
  return JSON.parse(toJsonText(value)) as T;
}
