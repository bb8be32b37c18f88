/**
 * Vendor text PostgreSQL cannot hold, stored losslessly.
 *
 * PostgreSQL text and jsonb cannot hold U+0000 (NUL), and jsonb refuses a lone UTF-16 surrogate
 * (U+D800..U+DFFF without its pair), which JavaScript strings, and so vendor JSON, can carry. One such
 * string used to fail the whole page ("unsupported Unicode escape sequence").
 *
 * The escape: ESC = U+FFFF, a Unicode noncharacter (never assigned, not text anyone sends), followed
 * by the four lowercase hex digits of the UTF-16 code unit it stands for:
 *   U+0000             -> ESC "0000"
 *   lone U+D800..U+DFFF -> ESC "d800" .. ESC "dfff"
 *   U+FFFF itself      -> ESC "ffff"   (so every ESC in stored text starts an escape)
 * Everything else, including every well-formed string, is stored unchanged. Decoding is total and
 * exact: `unescapeStoredText` for a stored string, `unescapeStoredJsonText` for the JSON text of a
 * stored jsonb value (ESC "hhhh" becomes the JSON escape \uhhhh, which JSON.parse turns back into
 * the original code unit). Strings and object keys are escaped alike, in `raw` and in the canonical
 * columns (summary, names, source ids), so what is stored is the vendor's text exactly, in escaped form.
 */

const ESC = '\uffff';
/** NUL, a high surrogate not followed by a low one, a low one not preceded by a high one, or ESC. */
const NEEDS_ESCAPE_SRC = '\\u0000|[\\ud800-\\udbff](?![\\udc00-\\udfff])|(?<![\\ud800-\\udbff])[\\udc00-\\udfff]|\\uffff';
const NEEDS_ESCAPE = new RegExp(NEEDS_ESCAPE_SRC);
const NEEDS_ESCAPE_ALL = new RegExp(NEEDS_ESCAPE_SRC, 'g');
const ESCAPED = /\uffff([0-9a-f]{4})/g;

export function escapeStoredText(s: string): string {
  if (!NEEDS_ESCAPE.test(s)) return s;
  return s.replace(NEEDS_ESCAPE_ALL, (c) => ESC + c.charCodeAt(0).toString(16).padStart(4, '0'));
}

export function unescapeStoredText(s: string): string {
  return s.includes(ESC) ? s.replace(ESCAPED, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))) : s;
}

/** The JSON text of a stored jsonb value (e.g. `raw::text`) back to the vendor's JSON text. */
export function unescapeStoredJsonText(json: string): string {
  return json.includes(ESC) ? json.replace(ESCAPED, (_m, hex: string) => `\\u${hex}`) : json;
}

/** Plain objects and arrays: the shapes JSON payloads and connector fields are made of. */
function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object') return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/**
 * A deep copy with every string and key escaped; the value itself when nothing needs it (the
 * common case costs one walk and no allocation). Dates and other non-plain values pass as they are.
 */
export function escapeStored<T>(value: T): T {
  if (typeof value === 'string') return escapeStoredText(value) as T;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v = escapeStored(value[i]);
      if (v !== value[i]) (out ??= value.slice())[i] = v;
    }
    return (out ?? value) as T;
  }
  if (isPlainObject(value)) {
    let out: Record<string, unknown> | undefined;
    const keys = Object.keys(value);
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i];
      const ek = escapeStoredText(k);
      const v = escapeStored(value[k]);
      if (!out && (ek !== k || v !== value[k])) {
        out = {};
        for (let j = 0; j < i; j++) define(out, keys[j], value[keys[j]]);
      }
      if (out) define(out, ek, v);
    }
    return (out ?? value) as T;
  }
  return value;
}

/** Own data property, even for a key such as `__proto__` (JSON.parse makes those own properties too). */
function define(o: Record<string, unknown>, k: string, v: unknown): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}
