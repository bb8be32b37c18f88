/**
 * What a connection must pass before it is saved, so that a mistake shows at once rather than at the
 * first sync: the credentials its connector names (each a non-empty string, no others), a base URL the
 * outbound guard admits, and on request one authenticated call to the vendor (the connector's probe).
 * Also the status mapping a PSA connection gets when none is given (derived from the closed flags).
 */
import { CANONICAL_STATUSES } from '../connectors/canonical';
import { capabilitiesOf, readConnector } from '../connectors/registry';
import type { SyncContext } from '../connectors/types';
import { VendorHttpClient, VendorHttpError } from '../connectors/vendor-http';
import { ServiceError } from '../errors/service-error';
import { checkReceiverUrl, ReceiverUrlRefused, type HostResolver } from '../webhooks/ssrf-guard';

/** The connector's credentials, trimmed; refuses missing, empty and foreign names. */
export function checkCredentials(connector: string, given: Record<string, string | null | undefined>): Record<string, string> {
  const names = capabilitiesOf(connector).credentials;
  const optional = capabilitiesOf(connector).optionalCredentials ?? [];
  const foreign = Object.keys(given).filter((k) => given[k] != null && !names.includes(k) && !optional.includes(k));
  if (foreign.length) {
    throw new ServiceError('validation', `The ${connector} connector takes the credentials ${[...names, ...optional].join(', ')}; not ${foreign.join(', ')}.`, { details: { field: 'credentials', foreign } });
  }
  const out: Record<string, string> = {};
  for (const n of optional) {
    const v = given[n]?.trim();
    if (v) out[n] = v;
  }
  const missing: string[] = [];
  for (const n of names) {
    const v = given[n]?.trim();
    if (v) out[n] = v; else missing.push(n);
  }
  if (missing.length) {
    throw new ServiceError('validation', `The ${connector} connector needs non-empty credentials ${missing.join(', ')}.`, { details: { field: 'credentials', missing } });
  }
  return out;
}

/** The base URL without a trailing slash, once the outbound guard admits it (public https; loopback only under WEBHOOK_ALLOW_LOOPBACK). */
export async function checkBaseUrl(raw: string, opts: { allowLoopback: boolean; resolve?: HostResolver; fixturePrefix?: string }): Promise<string> {
  // Our own simulators (the sandbox's fixture hosts), when this server mounts them.
  // Compared once normalised, so that a dot segment cannot climb out of the prefix.
  if (opts.fixturePrefix && URL.canParse(raw)) {
    const href = new URL(raw).href;
    if (href.startsWith(opts.fixturePrefix) && !/[?#@]/.test(href)) return href.replace(/\/+$/, '');
  }
  try {
    const { url } = await checkReceiverUrl(raw, opts);
    if (url.search || url.hash) throw new ReceiverUrlRefused('url must not carry a query or fragment.', 'invalid');
  } catch (err) {
    if (!(err instanceof ReceiverUrlRefused)) throw err;
    throw new ServiceError('validation', `base_url: ${err.message.replace(/^url /, '')}`, { details: { field: 'base_url', reason: err.message } });
  }
  return raw.replace(/\/+$/, '');
}

/** A short, log-safe rendering of what the vendor answered. */
function vendorAnswer(body: unknown): string {
  if (body && typeof body === 'object') {
    const b = body as Record<string, unknown>;
    for (const k of ['message', 'error_description', 'error', 'title', 'detail']) if (typeof b[k] === 'string' && b[k]) return (b[k] as string).slice(0, 300);
    if (Array.isArray(b.errors) && b.errors.length) return JSON.stringify(b.errors).slice(0, 300);
  }
  return typeof body === 'string' ? body.slice(0, 300) : JSON.stringify(body ?? null).slice(0, 300);
}

// One try, short: a connection test answers while the admin waits.
const probeHttp = new VendorHttpClient({ maxRetries: 0, timeoutMs: 15_000 });

function syncContext(baseUrl: string, credentials: Record<string, string>, http: VendorHttpClient): SyncContext {
  return { baseUrl, credentials, statusMapping: {}, since: null, http };
}

/**
 * A call to the vendor while saving a connection. A refusal is a 422 `validation` naming the vendor's
 * status and answer, and the field to fix (401/403: credentials; anything else: base_url).
 */
async function vendorCall<T>(connector: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof VendorHttpError) {
      const field = err.status === 401 || err.status === 403 ? 'credentials' : 'base_url';
      const what = err.network ? 'could not be reached' : `answered ${err.status}: ${vendorAnswer(err.body)}`;
      throw new ServiceError('validation', `Connection test failed: ${connector} ${what}`, {
        details: { field, vendor_status: err.network ? null : err.status, vendor_answer: err.network ? err.message : vendorAnswer(err.body) },
      });
    }
    // A connector that can name the setting to fix (a vendor that hosts each customer in a zone says which base URL is right).
    if (err instanceof Error && (err as { field?: unknown }).field === 'base_url') {
      throw new ServiceError('validation', `Connection test failed: ${err.message}`, { details: { field: 'base_url' } });
    }
    const message = err instanceof Error ? err.message : String(err);
    throw new ServiceError('validation', `Connection test failed: ${connector} gave an answer we cannot read (${message.slice(0, 200)}); is base_url the API root?`, { details: { field: 'base_url' } });
  }
}

/** The connector's probe: one authenticated call. */
export async function testConnection(connector: string, baseUrl: string, credentials: Record<string, string>): Promise<void> {
  await vendorCall(connector, () => readConnector(connector).probe(syncContext(baseUrl, credentials, probeHttp)));
}

export interface VendorStatus { name: string; closed: boolean; board: string | null; sortOrder: number | null }

/** The PSA's ticket statuses, read through the connector (its `statuses` resource), or null when it reads none. */
export async function vendorStatuses(connector: string, baseUrl: string, credentials: Record<string, string>): Promise<VendorStatus[] | null> {
  const read = readConnector(connector);
  if (!read.resources.includes('statuses')) return null;
  return vendorCall(connector, async () => {
    const out: VendorStatus[] = [];
    for await (const page of read.fetch('statuses', syncContext(baseUrl, credentials, probeHttp))) {
      for (const r of page) out.push({ name: r.fields.name, closed: r.fields.closed, board: r.fields.boardSourceId, sortOrder: r.fields.sortOrder });
    }
    return out;
  });
}

/**
 * The mapping a connection gets when none is given: a status the vendor flags closed is `closed`; the
 * first open status of each board (lowest sort order) is `new`; every other open status is
 * `in_progress`. A name that is closed on one board and open on another is `closed`; `new` wins over
 * `in_progress`. `waiting` and `resolved` are never guessed: give a mapping for them.
 */
export function deriveStatusMapping(statuses: VendorStatus[]): Record<string, string> {
  const rank: Record<string, number> = { closed: 3, new: 2, in_progress: 1 };
  const out: Record<string, string> = {};
  const boards = new Map<string, VendorStatus[]>();
  for (const s of statuses) boards.set(s.board ?? '', [...(boards.get(s.board ?? '') ?? []), s]);
  for (const list of boards.values()) {
    const open = list.filter((s) => !s.closed).sort((a, b) => (a.sortOrder ?? Infinity) - (b.sortOrder ?? Infinity));
    for (const s of list) {
      const canonical = s.closed ? 'closed' : s === open[0] ? 'new' : 'in_progress';
      if (!out[s.name] || rank[canonical] > rank[out[s.name]]) out[s.name] = canonical;
    }
  }
  return out;
}

/** Vendor statuses a ticket would carry as `status: null` under the mapping (not mapped and not flagged closed). */
export function unmappedStatuses(statuses: VendorStatus[], mapping: Record<string, string>): string[] {
  return [...new Set(statuses.filter((s) => !s.closed && !(CANONICAL_STATUSES as readonly string[]).includes(mapping[s.name] ?? '')).map((s) => s.name))].sort();
}
