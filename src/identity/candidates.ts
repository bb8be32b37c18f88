/**
 * The one ranking of identity candidates (docs/architecture.md, Companies, contacts and identity): which
 * PSA companies a book customer may be (or which customers a PSA company may be), best first, with the
 * reasons a person can read. Only people decide on it: auto-match stays exact normal name only
 * (identity.service.ts); this ranks what the console and `identity_candidates` offer.
 *
 * Signals, strongest first:
 * - `external_id`: the ISV's ref is the company's identifier or an external id the PSA record carries;
 * - `exact_name`: the same name but for case and surrounding space;
 * - `normalized_name`: the same normal form (normalize.ts: case, accents, punctuation, legal suffixes),
 *   or the same letters once spaces are gone ("AdventureWorks" = "Adventure Works");
 * - `domain`: the book's domain is the company's web site (www. and scheme aside);
 * - `phone`: the same number, digits only (the last ten);
 * - `similar_name`: shared words (a word within one typo of another counts; in a search, a word typed
 *   as the start of a longer one counts), scored by the Dice coefficient of the two word sets, or by
 *   how much of the shorter name the longer holds.
 * Scores: external id 0.95, exact name 0.9, normal form 0.85, shared words up to 0.8; a domain adds 0.1
 * (0.7 on its own), a phone 0.05 (0.6 on its own), up to 1: of two companies of one name, the one whose
 * web site or phone is the customer's comes first. A candidate with no signal, or a name score below
 * SIMILAR_FLOOR, is not offered.
 */
import { normalizeName } from './normalize';

export type CandidateReason = 'external_id' | 'exact_name' | 'normalized_name' | 'domain' | 'phone' | 'similar_name';

/** What ranking reads of either side: a name, and what else may tell it apart. */
export interface Party {
  name: string;
  /** Ids the other side might carry: the ISV's ref; the PSA company's identifier and external ids. */
  ids?: (string | null | undefined)[];
  domain?: string | null;
  phone?: string | null;
}

/** What the PSA record says beside the name (shown so that companies sharing a name can be told apart). */
export interface CompanyDetails {
  city: string | null;
  phone: string | null;
  domain: string | null;
  /** External ids the record carries (a company number, a reference, an externalId field). */
  external_ids: string[];
}

export interface Scored<T> {
  item: T;
  /** 0 to 1, two decimals. */
  score: number;
  reasons: CandidateReason[];
}

export const SIMILAR_FLOOR = 0.3;

/** Prepared once per party so that ranking many pairs stays cheap. */
export interface Prepared {
  exact: string;
  normal: string;
  compact: string;
  tokens: string[];
  ids: Set<string>;
  domain: string | null;
  phone: string | null;
}

const idKey = (s: string) => s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');

export function prepare(p: Party): Prepared {
  const normal = normalizeName(p.name);
  // Single letters ("Margie's" -> "margie s") carry no meaning of their own.
  const words = normal.split(' ').filter(Boolean);
  const tokens = words.filter((t) => t.length > 1);
  return {
    exact: p.name.trim().toLowerCase(),
    normal,
    compact: normal.replace(/ /g, ''),
    tokens: tokens.length ? tokens : words,
    ids: new Set((p.ids ?? []).filter((x): x is string => Boolean(x)).map(idKey).filter((x) => x.length >= 2)),
    domain: domainOf(p.domain),
    phone: phoneOf(p.phone),
  };
}

/** `https://www.Contoso.com/about` -> `contoso.com`; null when there is no host in it. */
export function domainOf(value: string | null | undefined): string | null {
  if (!value) return null;
  const host = value.trim().toLowerCase().replace(/^[a-z][a-z0-9+.-]*:\/\//, '').replace(/^[^@/]*@/, '').split(/[/?#:]/)[0].replace(/^www\d?\./, '').replace(/\.$/, '');
  return /^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(host) ? host : null;
}

/** The last ten digits of a phone number (country codes aside); null under seven digits. */
export function phoneOf(value: string | null | undefined): string | null {
  const digits = (value ?? '').replace(/\D/g, '');
  return digits.length >= 7 ? digits.slice(-10) : null;
}

/** Within one edit (insert, delete or replace one letter), for words of four letters or more. */
function nearlySame(a: string, b: string): boolean {
  if (a === b) return true;
  if (Math.min(a.length, b.length) < 4 || Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  let j = 0;
  let edits = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) { i++; j++; continue; }
    if (++edits > 1) return false;
    if (a.length > b.length) i++;
    else if (b.length > a.length) j++;
    else { i++; j++; }
  }
  return edits + (a.length - i) + (b.length - j) <= 1;
}

/** How many words of `a` find a word of `b` (each word of b used once). */
function sharedWords(a: string[], b: string[], prefix: boolean): number {
  const free = [...b];
  let n = 0;
  for (const t of a) {
    let k = free.indexOf(t);
    if (k < 0) k = free.findIndex((u) => nearlySame(t, u) || (prefix && t.length >= 3 && u.startsWith(t)));
    if (k >= 0) { n++; free.splice(k, 1); }
  }
  return n;
}

/** Word similarity, 0 to 1: Dice of the word sets, or how much of the shorter name the longer holds. */
export function nameSimilarity(a: Prepared, b: Prepared, search = false): number {
  if (!a.tokens.length || !b.tokens.length) return 0;
  const shared = sharedWords(a.tokens, b.tokens, search);
  const dice = (2 * shared) / (a.tokens.length + b.tokens.length);
  // A search is a few words of the name: what counts is how many of them it finds.
  if (search) return Math.max(dice, shared / a.tokens.length * 0.9);
  const shorter = Math.min(a.tokens.length, b.tokens.length);
  const held = shorter >= 2 ? (shared / shorter) * 0.85 : 0;
  return Math.max(dice, held);
}

/**
 * How well `b` answers `a`: the score and its reasons, or null when nothing ties them. `search`: `a` is
 * what a person typed, not a name (a word may be the start of a longer one).
 */
export function scorePair(a: Prepared, b: Prepared, search = false): { score: number; reasons: CandidateReason[] } | null {
  const reasons: CandidateReason[] = [];
  let score = 0;
  if (a.ids.size && [...a.ids].some((x) => b.ids.has(x))) { reasons.push('external_id'); score = 0.95; }
  if (a.exact && a.exact === b.exact) { reasons.push('exact_name'); score = Math.max(score, 0.9); }
  else if (a.normal && (a.normal === b.normal || (a.compact.length >= 4 && a.compact === b.compact))) { reasons.push('normalized_name'); score = Math.max(score, 0.85); }
  else {
    const sim = nameSimilarity(a, b, search);
    if (sim >= SIMILAR_FLOOR) { reasons.push('similar_name'); score = Math.max(score, Math.round(sim * 0.8 * 100) / 100); }
  }
  // Domain and phone confirm a name, or stand on their own when the names differ entirely.
  if (a.domain && a.domain === b.domain) { reasons.push('domain'); score = Math.min(1, Math.max(score + 0.1, 0.7)); }
  if (a.phone && a.phone === b.phone) { reasons.push('phone'); score = Math.min(1, Math.max(score + 0.05, 0.6)); }
  if (!reasons.length) return null;
  return { score: Math.round(score * 100) / 100, reasons };
}

/** Best first: score, then name, then the id the caller gives (stable for equal names). */
export function rank<T>(subject: Prepared, items: { item: T; prepared: Prepared; key: string }[], options: { limit: number; search?: boolean }): Scored<T>[] {
  const out: (Scored<T> & { key: string; name: string })[] = [];
  for (const it of items) {
    const s = scorePair(subject, it.prepared, options.search);
    if (s) out.push({ item: it.item, ...s, key: it.key, name: it.prepared.exact });
  }
  out.sort((x, y) => y.score - x.score || x.name.localeCompare(y.name) || x.key.localeCompare(y.key));
  return out.slice(0, options.limit).map(({ item, score, reasons }) => ({ item, score, reasons }));
}

/**
 * Many subjects against one list (the leftovers page): an index by word start, domain, phone and id so
 * that each subject is scored only against the items that share something with it.
 */
export class CandidateIndex<T> {
  private readonly byKey = new Map<string, number[]>();
  private readonly items: { item: T; prepared: Prepared; key: string }[];

  constructor(items: { item: T; party: Party; key: string }[]) {
    this.items = items.map((i) => ({ item: i.item, prepared: prepare(i.party), key: i.key }));
    this.items.forEach((it, n) => { for (const k of keysOf(it.prepared)) this.add(k, n); });
  }

  private add(k: string, n: number): void {
    const list = this.byKey.get(k);
    if (list) { if (list[list.length - 1] !== n) list.push(n); } else this.byKey.set(k, [n]);
  }

  /** The best `limit` items for one subject, or every item for a search. */
  best(subject: Party, limit: number): Scored<T>[] {
    const p = prepare(subject);
    const seen = new Set<number>();
    for (const k of keysOf(p)) for (const n of this.byKey.get(k) ?? []) seen.add(n);
    return rank(p, [...seen].map((n) => this.items[n]), { limit });
  }
}

function keysOf(p: Prepared): string[] {
  return [
    ...p.tokens.map((t) => `w:${t.slice(0, 4)}`), `c:${p.compact}`,
    ...(p.domain ? [`d:${p.domain}`] : []), ...(p.phone ? [`p:${p.phone}`] : []), ...[...p.ids].map((x) => `i:${x}`),
  ];
}

/**
 * City, phone, web domain and external ids from a PSA company's own record, whatever the vendor calls
 * them: the field names the PSAs use are tried in turn (city, phone/phoneNumber, website/webAddress,
 * companyNumber/ref). Known debt: these names belong in the connectors' declarations.
 */
export function companyDetails(raw: Record<string, unknown> | null | undefined): CompanyDetails {
  const r = raw ?? {};
  const pick = (...keys: string[]): string | null => {
    for (const k of keys) {
      const v = k.split('.').reduce<unknown>((o, part) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[part] : undefined), r);
      if ((typeof v === 'string' && v.trim()) || typeof v === 'number') return String(v).trim();
    }
    return null;
  };
  const ids = ['externalId', 'external_id', 'externalID', 'companyNumber', 'accountNumber', 'account_number', 'ref']
    .map((k) => pick(k)).filter((x): x is string => Boolean(x));
  return {
    city: pick('city', 'address.city', 'site.city', 'main_site_name', 'town'),
    phone: pick('phoneNumber', 'phone', 'phone_number', 'main_phone', 'telephone'),
    domain: domainOf(pick('website', 'webAddress', 'web_address', 'url', 'domain')),
    external_ids: [...new Set(ids)],
  };
}
