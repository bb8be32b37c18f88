/**
 * What the request log keeps of a request and its answer, with every secret taken out (docs/architecture.md,
 * Request log). Redaction works two ways, both always:
 * - by name: the value of a field or header whose name says secret (`secret`, `*_token`, `password`,
 *   `credentials`, `api_key`, `authorization`, `x-api-key`, `cookie`, ...) becomes `[redacted]`, whole
 *   (an object such as `credentials` included), and every string found under it becomes a known secret;
 * - by value: every known secret (the request's own key, each secret found by name in the request or the
 *   answer, such as a webhook secret minted by this very request) is replaced wherever else it appears, and
 *   text shaped like a secret (`sk_..._...` keys, `whsec_...`, a token in a one-time link's path, a bearer
 *   token) is replaced even where no name announced it.
 * A body is cut at BODY_LIMIT bytes after redaction; a body that was not whole JSON (cut on capture, or
 * not JSON) is redacted as text, including a secret field's value cut open at the end.
 */

/** The most of one body the log keeps. */
export const BODY_LIMIT = 64 * 1024;
export const REDACTED = '[redacted]';

/** Field and header names whose value is a secret, compared without case, `-` or `_`. */
const SECRET_NAMES = new Set([
  'secret', 'secrets', 'password', 'passwd', 'passphrase', 'token', 'accesstoken', 'refreshtoken', 'idtoken', 'apikey', 'xapikey',
  'authorization', 'proxyauthorization', 'cookie', 'setcookie', 'clientsecret', 'privatekey', 'credentials', 'credential',
  'secretkey', 'signingsecret', 'webhooksecret', 'key', 'newkey', 'mspkey', 'sessiontoken', 'csrf', 'csrftoken', 'code', 'codeverifier',
]);
/** Names ending so are secrets too (`vendor_client_secret`, `oauth_refresh_token`, `admin_password`). */
const SECRET_SUFFIXES = ['secret', 'token', 'password', 'apikey', 'privatekey', 'credentials'];
/**
 * `key` and `code` are secrets only where they hold one: a grant's `key` (`psa.ticket.create`) and an
 * error's `code` (`not_found`) are words of the interface, kept.
 */
const WORDLIKE = /^[a-z][a-z0-9_.-]{0,80}$/;

function normalName(name: string): string {
  return name.toLowerCase().replace(/[-_\s]/g, '');
}

/**
 * What a name says, remembered: a page of records repeats the same few field names thousands of times, and
 * the log redacts every answer. `value` means the name is `key` or `code` (its value decides). Bounded.
 */
const NAME_VERDICTS = new Map<string, boolean | 'value'>();

function verdictOf(name: string): boolean | 'value' {
  let verdict = NAME_VERDICTS.get(name);
  if (verdict === undefined) {
    const n = normalName(name);
    verdict = n === 'key' || n === 'code' ? 'value' : SECRET_NAMES.has(n) || SECRET_SUFFIXES.some((s) => n.endsWith(s));
    if (NAME_VERDICTS.size >= 10_000) NAME_VERDICTS.clear();
    NAME_VERDICTS.set(name, verdict);
  }
  return verdict;
}

/** Whether a field or header of this name holds a secret (given its value, for `key` and `code`). */
export function isSecretName(name: string, value?: unknown): boolean {
  const verdict = verdictOf(name);
  if (verdict !== 'value') return verdict;
  return typeof value === 'string' ? !WORDLIKE.test(value) : value !== undefined && value !== null && typeof value === 'object';
}

/**
 * Text shaped like a secret wherever it stands: our API keys (`sk_live_...`, `sk_msp_...`, the sandbox's),
 * Standard Webhooks secrets, bearer and basic credentials, and the one-time token of a link's path
 * (connect, sign-in, invitation, console links).
 */
const SECRET_SHAPES: [RegExp, string][] = [
  [/\bsk_[a-z]+_[A-Za-z0-9_-]{16,}/g, REDACTED],
  [/\bwhsec_[A-Za-z0-9+/=_-]{8,}/g, REDACTED],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi, `$1 ${REDACTED}`],
  [/\/(connect\/progress|connect(?!\/oauth\/)|sign-in\/link|invitations|console\/link)\/(?!\[redacted\])[A-Za-z0-9._~-]{16,}/g, `/$1/${REDACTED}`],
];

/** The secrets one request is known to carry or mint, kept to replace them by value. */
export class KnownSecrets {
  private readonly values = new Set<string>();

  /** Remembers a secret (ignores text too short to be one, which would redact ordinary words). */
  add(value: unknown): void {
    if (typeof value === 'string') {
      if (value.length >= 6) this.values.add(value);
      // A link's one-time token on its own, where it appears without the link.
      const token = /\/(?:connect|sign-in\/link|invitations|console\/link)\/([A-Za-z0-9._~-]{16,})/.exec(value)?.[1];
      if (token) this.values.add(token);
    } else if (Array.isArray(value)) for (const v of value) this.add(v);
    else if (value && typeof value === 'object') for (const v of Object.values(value)) this.add(v);
    else if (typeof value === 'number' && String(value).length >= 6) this.values.add(String(value));
  }

  /**
   * Text cut at its end may end in the first characters of a secret (a key cut in two): they go too, as
   * does the start of a secret-shaped text.
   */
  withoutCutSecret(text: string): string {
    for (const v of this.values) {
      for (let k = Math.min(v.length - 1, 200); k >= 4; k--) {
        if (text.endsWith(v.slice(0, k))) return `${text.slice(0, -k)}${REDACTED}`;
      }
    }
    return text.replace(/(\bsk_[A-Za-z0-9_-]*|\bwhsec_[A-Za-z0-9+/=_-]*|\b(?:Bearer|Basic)\s+\S*)$/i, REDACTED);
  }

  /** Every known secret and every secret-shaped text in `text`, replaced. */
  scrub(text: string): string {
    let out = text;
    // Longest first: a secret that contains another is replaced whole.
    for (const v of [...this.values].sort((a, b) => b.length - a.length)) {
      if (out.includes(v)) out = out.split(v).join(REDACTED);
      const escaped = JSON.stringify(v).slice(1, -1); // as it stands inside a JSON string
      if (escaped !== v && out.includes(escaped)) out = out.split(escaped).join(REDACTED);
    }
    for (const [shape, replacement] of SECRET_SHAPES) out = out.replace(shape, replacement);
    return out;
  }
}

/** A JSON value with every secret-named field replaced, remembering what it held. */
export function redactValue(value: unknown, known: KnownSecrets): unknown {
  if (Array.isArray(value)) return value.map((v) => redactValue(v, known));
  if (!value || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (isSecretName(k, v) && v !== null && v !== '') {
      known.add(v);
      out[k] = REDACTED;
    } else out[k] = redactValue(v, known);
  }
  return out;
}


/**
 * A JSON field whose name says secret, in text that is not whole JSON: its string value (cut open at the
 * end too, an escape's lone backslash included). The string is matched as an unrolled loop, which
 * backtracks far less than an alternation per character over a 64 KiB page.
 */
const SECRET_FIELD_IN_TEXT = /"([A-Za-z0-9_-]{1,60})"\s*:\s*"([^"\\]*(?:\\.[^"\\]*)*)("|\\?$)/g;

function redactText(text: string): string {
  // Only the secret fields are rebuilt; the text is copied once, and not at all when none is found.
  let out = '';
  let last = 0;
  SECRET_FIELD_IN_TEXT.lastIndex = 0;
  for (let m = SECRET_FIELD_IN_TEXT.exec(text); m; m = SECRET_FIELD_IN_TEXT.exec(text)) {
    const [whole, name, value, end] = m as unknown as [string, string, string, string];
    if (value === '' || !isSecretName(name, value)) continue;
    out += `${text.slice(last, m.index)}"${name}":"${REDACTED}${end === '"' ? '"' : ''}`;
    last = m.index + whole.length;
  }
  return last === 0 ? text : out + text.slice(last);
}

/** Cuts text to `limit` bytes of UTF-8 (never inside a character). */
export function cutBytes(text: string, limit: number): { text: string; cut: boolean } {
  // Counted before it is copied: most text fits.
  if (text.length <= limit / 3 || Buffer.byteLength(text, 'utf8') <= limit) return { text, cut: false };
  const bytes = Buffer.from(text, 'utf8');
  let end = limit;
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--;
  return { text: bytes.subarray(0, end).toString('utf8'), cut: true };
}

export interface KeptBody { text: string | null; truncated: boolean }

/**
 * One body as the log keeps it: `parsed` when the body was read as JSON (a request; `redacted` when it
 * has been through redactValue already), else `raw` text
 * (an answer as it was sent, `complete` false when its capture was cut). Redacted by name and by value,
 * then cut at BODY_LIMIT.
 */
export function keptBody(body: { parsed?: unknown; redacted?: unknown; raw?: string | null; complete?: boolean }, known: KnownSecrets): KeptBody {
  let text: string;
  let truncated = body.complete === false;
  if (body.redacted !== undefined) {
    // Redacted by name already (redactValue), which taught `known` its secrets before either body was kept.
    text = JSON.stringify(body.redacted) ?? '';
  } else if (body.parsed !== undefined) {
    text = JSON.stringify(redactValue(body.parsed, known)) ?? '';
  } else if (body.raw == null || body.raw === '') {
    return { text: null, truncated: false };
  } else {
    let json: unknown;
    let isJson = false;
    if (!truncated) {
      try { json = JSON.parse(body.raw); isJson = true; } catch { /* not JSON: redacted as text */ }
    }
    text = isJson ? JSON.stringify(redactValue(json, known)) : redactText(body.raw);
  }
  // PostgreSQL text holds no NUL; kept visible as JSON writes it.
  // eslint-disable-next-line no-control-regex -- NUL is what it replaces
  text = known.scrub(text).replace(/\u0000/g, '\\u0000');
  const cut = cutBytes(text, BODY_LIMIT);
  truncated ||= cut.cut;
  return { text: truncated ? known.withoutCutSecret(cut.text) : cut.text, truncated };
}

/** Request or answer headers as the log keeps them: every value a string, secret ones replaced. */
export function keptHeaders(headers: Record<string, unknown>, known: KnownSecrets): { name: string; value: string }[] {
  const out: { name: string; value: string }[] = [];
  for (const [name, raw] of Object.entries(headers)) {
    if (raw === undefined) continue;
    const value = Array.isArray(raw) ? raw.join(', ') : String(raw);
    const lower = name.toLowerCase();
    out.push({ name: lower, value: isSecretName(lower, value) ? REDACTED : cutBytes(known.scrub(value), 2048).text });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/** A query string as the log keeps it: secret-named parameters replaced, known secrets scrubbed. */
export function keptQuery(query: string, known: KnownSecrets): string | null {
  if (!query) return null;
  const params = new URLSearchParams(query);
  const kept = new URLSearchParams();
  for (const [k, v] of params) kept.append(k, isSecretName(k, v) ? REDACTED : v);
  return cutBytes(known.scrub(kept.toString()), 4096).text;
}
