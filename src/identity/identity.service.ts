/**
 * Identity (interface document rules 10 and 11, docs/architecture.md, Companies, contacts and identity): which of the MSP's PSA companies
 * each customer of an ISV's book is. Auto-match fills Match only (exact normal form of the name, unique
 * on both sides, never an import); a shared name stays Needs match with every candidate; the ISV or the
 * MSP decides the rest (match, skip, unset, import). One ISV sees only its own book.
 */
import type { DataSource } from 'typeorm';
import type { Connection, DecidedBy, IdentityMatch, ImportEndpoint, IsvCustomer } from '../../entities';
import type { TenantAccess } from '../access/access.service';
import { ServiceError } from '../errors/service-error';
import { CandidateIndex, companyDetails, prepare, rank, scorePair, type CandidateReason, type CompanyDetails, type Party } from './candidates';
import { normalizeName } from './normalize';
import { IdentityStore, type IdentitySide, type PsaCompany } from './identity.store';
import { CommittedChanges, type CommittedReaction } from '../shared/committed-changes';
import { Transactions } from '../db/transactions';

export type { PsaCompany } from './identity.store';

export interface BookCustomer {
  ref: string;
  name: string;
  domain?: string | null;
}

export interface UnmappedRow {
  side: 'psa_company' | 'isv_customer';
  id: string;
  connection_id: string | null;
  name: string;
  state: 'needs_match' | 'skipped';
  candidates: { side: 'psa_company' | 'isv_customer'; id: string; connection_id: string | null; name: string }[];
  /** The best few unmatched rows of the other side, ranked (candidates.ts), for a person to choose from. */
  suggestions: RankedCandidate[];
  actions: ('match' | 'import' | 'skip' | 'unset')[];
}

/** A ranked candidate: the row, how well it fits and why, what tells it apart, and whom it is matched with already. */
export interface RankedCandidate {
  side: 'psa_company' | 'isv_customer';
  id: string;
  connection_id: string | null;
  name: string;
  score: number;
  reasons: CandidateReason[];
  identifier: string | null;
  city: string | null;
  phone: string | null;
  domain: string | null;
  matched_with: { id: string; connection_id: string | null; name: string | null } | null;
}

/** Whose candidates: a book customer (PSA companies ranked), a PSA company (customers ranked), or a search alone. */
export interface CandidateQuery {
  customerRef?: string | null;
  company?: { sourceId: string; connectionId?: string | null } | null;
  q?: string | null;
  limit: number;
}

interface CompanyProfile extends PsaCompany { details: CompanyDetails }

const BATCH = 1000;
/** How many ranked suggestions each leftover carries. */
const SUGGESTIONS = 5;
const companyKey = (connectionId: string, sourceId: string) => `${connectionId}:${sourceId}`;

declare module '../shared/committed-changes' {
  interface ChangeKinds {
    /** A tenant's customer matches changed (auto-match, a match set, skipped or unset). */
    'identity.matches_changed': CommittedReaction<{ tenantId: string }>;
  }
}

export class IdentityService {
  private readonly store: IdentityStore;

  /** `changes`: where a change of a tenant's matches is told (`identity.matches_changed`: billing recomputes its charges). */
  /** What commits together (src/db/transactions.ts). */
  private readonly transactions: Transactions;
  constructor(ds: DataSource, private readonly changes: CommittedChanges = new CommittedChanges()) {
    this.transactions = new Transactions(ds);
    this.store = new IdentityStore(ds);
  }

  /** The PSA companies of the tenant (every PSA connection), from the store. */
  async psaCompanies(access: TenantAccess, ordered = true): Promise<PsaCompany[]> {
    const psa = access.connections.filter((c) => c.kind === 'psa').map((c) => c.id);
    if (psa.length === 0) return [];
    return this.store.companies(access.tenant.id, psa, ordered);
  }

  // ---- the book ------------------------------------------------------------------------------

  /** Bulk upsert of the ISV's customers; auto-match runs before it answers. */
  async putBook(access: TenantAccess, isvId: string, customers: BookCustomer[]): Promise<{ upserted: number; matched: number; left_over: number }> {
    const tenantId = access.tenant.id;
    await this.transactions.run(async (m) => {
      for (let i = 0; i < customers.length; i += BATCH) {
        const rows = customers.slice(i, i + BATCH).map((c) => ({
          tenantId, isvId, ref: c.ref, name: c.name, normalizedName: normalizeName(c.name), domain: c.domain ?? null,
        }));
        await this.store.upsertCustomers(m, rows);
      }
    });
    await this.autoMatch(access, isvId);
    const counts = await this.store.bookCounts(tenantId, isvId);
    return { upserted: customers.length, matched: counts.matched, left_over: counts.total - counts.matched };
  }

  async book(tenantId: string, isvId: string): Promise<IsvCustomer[]> {
    return this.store.customersOfIsv(tenantId, isvId);
  }

  /** Removes one customer and the decisions about it. */
  async removeCustomer(tenantId: string, isvId: string, ref: string): Promise<boolean> {
    const out = await this.transactions.run(async (m) => {
      const gone = await this.store.deleteCustomer(m, tenantId, isvId, ref);
      const unmatched = await this.store.deleteMatchOf(m, tenantId, isvId, { customerRef: ref });
      await this.store.deleteSkip(m, tenantId, isvId, 'isv_customer', ref);
      return { gone, unmatched };
    });
    if (out.unmatched) await this.changes.publish('identity.matches_changed', { tenantId }, { tenantId });
    return out.gone;
  }

  // ---- auto-match ----------------------------------------------------------------------------

  /**
   * Pairs every customer and PSA company whose normal names are equal and unique on both sides, when
   * neither is matched or skipped already. Fills Match only; never imports. Answers how many it paired.
   */
  async autoMatch(access: TenantAccess, isvId: string): Promise<number> {
    const tenantId = access.tenant.id;
    const [customers, companies, matches, skips] = await Promise.all([
      this.store.customerNames(tenantId, isvId),
      this.psaCompanies(access, false),
      this.store.matchKeys(tenantId, isvId),
      this.store.skipKeys(tenantId, isvId),
    ]);
    const customersByName = new Map<string, string[]>();
    for (const c of customers) customersByName.set(c.normalized_name, [...(customersByName.get(c.normalized_name) ?? []), c.ref]);
    const companiesByName = new Map<string, PsaCompany[]>();
    for (const c of companies) {
      const n = normalizeName(c.name);
      companiesByName.set(n, [...(companiesByName.get(n) ?? []), c]);
    }
    const matchedCustomers = new Set(matches.map((m) => m.customer_ref));
    const matchedCompanies = new Set(matches.map((m) => companyKey(m.connection_id, m.company_source_id)));
    const skipped = new Set(skips.map((s) => `${s.side}|${s.subject}`));
    const rows: { ref: string; connection_id: string; source_id: string }[] = [];
    for (const [name, refs] of customersByName) {
      const found = companiesByName.get(name);
      if (refs.length !== 1 || found?.length !== 1) continue;
      const [ref] = refs;
      const [company] = found;
      const key = companyKey(company.connection_id, company.source_id);
      if (matchedCustomers.has(ref) || matchedCompanies.has(key)) continue;
      if (skipped.has(`isv_customer|${ref}`) || skipped.has(`psa_company|${key}`)) continue;
      rows.push({ ref, connection_id: company.connection_id, source_id: company.source_id });
    }
    if (rows.length === 0) return 0;
    // One statement for the whole set; a pair decided meanwhile by someone else wins (DO NOTHING).
    const inserted = await this.store.insertAutoMatches(tenantId, isvId, rows);
    if (inserted.length) await this.changes.publish('identity.matches_changed', { tenantId }, { tenantId });
    return inserted.length;
  }

  /** The ISV's import endpoint on the tenant, if it registered one. */
  importEndpoint(tenantId: string, isvId: string): Promise<ImportEndpoint | null> {
    return this.store.importEndpoint(tenantId, isvId);
  }

  /** Registers (or replaces) the ISV's import endpoint; answers the stored row. */
  putImportEndpoint(tenantId: string, isvId: string, url: string, secretEncrypted: string): Promise<ImportEndpoint> {
    return this.store.putImportEndpoint(tenantId, isvId, url, secretEncrypted);
  }

  /** The ISVs that keep a book on the tenant (auto-match runs for each after a sync). */
  async isvsWithBooks(tenantId: string): Promise<string[]> {
    return this.store.isvsWithBooks(tenantId);
  }

  // ---- reads ---------------------------------------------------------------------------------

  async mappings(access: TenantAccess, isvIds: string[] | null) {
    const matches = await this.store.matchesOfTenant(access.tenant.id, isvIds);
    const customers = matches.length ? await this.store.customersOfTenant(access.tenant.id, isvIds) : [];
    const nameOf = new Map(customers.map((c) => [`${c.isvId}|${c.ref}`, c.name]));
    const companies = new Map((await this.psaCompanies(access)).map((c) => [companyKey(c.connection_id, c.source_id), c]));
    return matches.map((m) => ({
      isv_id: m.isvId, customer_ref: m.customerRef, customer_name: nameOf.get(`${m.isvId}|${m.customerRef}`) ?? null,
      connection_id: m.connectionId, company_source_id: m.companySourceId,
      company_name: companies.get(companyKey(m.connectionId, m.companySourceId))?.name ?? null,
      how: m.how, decided_by: m.decidedBy, decided_at: m.createdAt.toISOString().replace('.000Z', 'Z'),
    }));
  }

  /**
   * The leftovers of one ISV's book: PSA companies and book customers without a match, each with the
   * actions it really has (`import` only when the ISV registered an import endpoint: without one,
   * import answers 501).
   */
  async unmapped(access: TenantAccess, isvId: string): Promise<UnmappedRow[]> {
    const tenantId = access.tenant.id;
    const [customers, companies, matches, skips, importable] = await Promise.all([
      this.book(tenantId, isvId),
      this.companyProfiles(access),
      this.store.matchesOfIsv(tenantId, isvId),
      this.store.skipsOfIsv(tenantId, isvId),
      this.store.hasImportEndpoint(tenantId, isvId),
    ]);
    const matchedCustomers = new Set(matches.map((m) => m.customerRef));
    const matchedCompanies = new Set(matches.map((m) => companyKey(m.connectionId, m.companySourceId)));
    const skipped = new Set(skips.map((s) => `${s.side}|${s.subject}`));
    const freeCustomers = customers.filter((c) => !matchedCustomers.has(c.ref));
    const freeCompanies = companies.filter((c) => !matchedCompanies.has(companyKey(c.connection_id, c.source_id)));
    const customersByName = groupBy(freeCustomers, (c) => c.normalizedName);
    const companiesByName = groupBy(freeCompanies, (c) => normalizeName(c.name));
    // The best few of the other side's free rows, ranked as the console and identity_candidates rank them.
    const companyIndex = new CandidateIndex(freeCompanies.map((c) => ({ item: c, key: companyKey(c.connection_id, c.source_id), party: { name: c.name, ids: [c.identifier, ...c.details.external_ids], domain: c.details.domain, phone: c.details.phone } })));
    const customerIndex = new CandidateIndex(freeCustomers.map((k) => ({ item: k, key: k.ref, party: { name: k.name, ids: [k.ref], domain: k.domain } })));
    const asCompany = (r: { item: CompanyProfile; score: number; reasons: CandidateReason[] }): RankedCandidate => ({
      side: 'psa_company', id: r.item.source_id, connection_id: r.item.connection_id, name: r.item.name, score: r.score, reasons: r.reasons,
      identifier: r.item.identifier, city: r.item.details.city, phone: r.item.details.phone, domain: r.item.details.domain, matched_with: null,
    });
    const asCustomer = (r: { item: IsvCustomer; score: number; reasons: CandidateReason[] }): RankedCandidate => ({
      side: 'isv_customer', id: r.item.ref, connection_id: null, name: r.item.name, score: r.score, reasons: r.reasons,
      identifier: null, city: null, phone: null, domain: r.item.domain, matched_with: null,
    });
    const rows: UnmappedRow[] = [];
    for (const c of freeCompanies) {
      const isSkipped = skipped.has(`psa_company|${companyKey(c.connection_id, c.source_id)}`);
      rows.push({
        side: 'psa_company', id: c.source_id, connection_id: c.connection_id, name: c.name,
        state: isSkipped ? 'skipped' : 'needs_match',
        candidates: (customersByName.get(normalizeName(c.name)) ?? []).map((k) => ({ side: 'isv_customer' as const, id: k.ref, connection_id: null, name: k.name })),
        suggestions: customerIndex.best({ name: c.name, ids: [c.identifier, ...c.details.external_ids], domain: c.details.domain, phone: c.details.phone }, SUGGESTIONS).map(asCustomer),
        actions: isSkipped ? ['unset'] : importable ? ['match', 'import', 'skip'] : ['match', 'skip'],
      });
    }
    for (const k of freeCustomers) {
      const isSkipped = skipped.has(`isv_customer|${k.ref}`);
      rows.push({
        side: 'isv_customer', id: k.ref, connection_id: null, name: k.name,
        state: isSkipped ? 'skipped' : 'needs_match',
        candidates: (companiesByName.get(k.normalizedName) ?? []).map((c) => ({ side: 'psa_company' as const, id: c.source_id, connection_id: c.connection_id, name: c.name })),
        suggestions: companyIndex.best({ name: k.name, ids: [k.ref], domain: k.domain }, SUGGESTIONS).map(asCompany),
        actions: isSkipped ? ['unset'] : ['match', 'skip'],
      });
    }
    return rows;
  }

  // ---- ranked candidates (candidates.ts) ------------------------------------------------------

  /** The tenant's PSA companies with what their records say beside the name. */
  private async companyProfiles(access: TenantAccess): Promise<CompanyProfile[]> {
    const psa = access.connections.filter((c) => c.kind === 'psa').map((c) => c.id);
    if (psa.length === 0) return [];
    return (await this.store.companiesWithRaw(access.tenant.id, psa)).map(({ raw, ...c }) => ({ ...c, details: companyDetails(raw) }));
  }

  /**
   * Ranked candidates for one subject: the PSA companies a book customer may be, the customers a PSA
   * company may be, or (a search alone) the PSA companies whose names answer `q`. With both a customer
   * and a company, that one pair, scored (score 0 and no reasons when nothing ties them). `q` replaces
   * the subject's name. Every row of the other side is considered, matched ones included (matched_with
   * says with whom): a person may match any of them once the other match is undone.
   */
  async candidates(access: TenantAccess, isvId: string, query: CandidateQuery): Promise<{ subject: RankedCandidate | null; candidates: RankedCandidate[] }> {
    const tenantId = access.tenant.id;
    const [profiles, customers, matches] = await Promise.all([
      this.companyProfiles(access), this.book(tenantId, isvId),
      this.store.matchesOfIsv(tenantId, isvId),
    ]);
    const q = query.q?.trim() || null;
    const customerName = new Map(customers.map((c) => [c.ref, c.name]));
    const byCompany = new Map(profiles.map((c) => [companyKey(c.connection_id, c.source_id), c]));
    const companyMatch = new Map(matches.map((m) => [companyKey(m.connectionId, m.companySourceId), m]));
    const customerMatch = new Map(matches.map((m) => [m.customerRef, m]));
    const companyOut = (c: CompanyProfile, score = 0, reasons: CandidateReason[] = []): RankedCandidate => {
      const m = companyMatch.get(companyKey(c.connection_id, c.source_id));
      return {
        side: 'psa_company', id: c.source_id, connection_id: c.connection_id, name: c.name, score, reasons,
        identifier: c.identifier, city: c.details.city, phone: c.details.phone, domain: c.details.domain,
        matched_with: m ? { id: m.customerRef, connection_id: null, name: customerName.get(m.customerRef) ?? null } : null,
      };
    };
    const customerOut = (k: IsvCustomer, score = 0, reasons: CandidateReason[] = []): RankedCandidate => {
      const m = customerMatch.get(k.ref);
      return {
        side: 'isv_customer', id: k.ref, connection_id: null, name: k.name, score, reasons,
        identifier: null, city: null, phone: null, domain: k.domain,
        matched_with: m ? { id: m.companySourceId, connection_id: m.connectionId, name: byCompany.get(companyKey(m.connectionId, m.companySourceId))?.name ?? null } : null,
      };
    };
    const companyParty = (c: CompanyProfile, name = c.name): Party => ({ name, ids: [c.identifier, ...c.details.external_ids], domain: c.details.domain, phone: c.details.phone });
    const customerParty = (k: IsvCustomer, name = k.name): Party => ({ name, ids: [k.ref], domain: k.domain });
    const companyItems = () => profiles.map((c) => ({ item: c, prepared: prepare(companyParty(c)), key: companyKey(c.connection_id, c.source_id) }));
    const options = { limit: query.limit, search: Boolean(q) };

    if (query.customerRef) {
      const customer = customers.find((c) => c.ref === query.customerRef);
      if (!customer) throw new ServiceError('not_found', `No customer ${query.customerRef} in this ISV's book.`);
      const subject = prepare(customerParty(customer, q ?? customer.name));
      if (query.company) {
        const company = pickCompany(profiles, query.company.sourceId, query.company.connectionId);
        const s = scorePair(subject, prepare(companyParty(company)));
        return { subject: customerOut(customer), candidates: [companyOut(company, s?.score, s?.reasons)] };
      }
      return { subject: customerOut(customer), candidates: rank(subject, companyItems(), options).map((r) => companyOut(r.item, r.score, r.reasons)) };
    }
    if (query.company) {
      const company = pickCompany(profiles, query.company.sourceId, query.company.connectionId);
      const subject = prepare(companyParty(company, q ?? company.name));
      const items = customers.map((k) => ({ item: k, prepared: prepare(customerParty(k)), key: k.ref }));
      return { subject: companyOut(company), candidates: rank(subject, items, options).map((r) => customerOut(r.item, r.score, r.reasons)) };
    }
    if (!q) throw new ServiceError('validation', 'Name a customer (customer_ref), a PSA company (company_source_id) or words to search for (q).', { details: { field: 'q' } });
    return { subject: null, candidates: rank(prepare({ name: q }), companyItems(), options).map((r) => companyOut(r.item, r.score, r.reasons)) };
  }

  // ---- decisions -----------------------------------------------------------------------------

  /** The PSA company a request names: by source id, on the one PSA connection or the one it names. */
  async company(access: TenantAccess, sourceId: string, connectionId?: string | null): Promise<PsaCompany> {
    const found = (await this.psaCompanies(access)).filter((c) => c.source_id === sourceId && (!connectionId || c.connection_id === connectionId));
    if (found.length === 0) throw new ServiceError('not_found', `No PSA company ${sourceId} in this tenant.`);
    if (found.length > 1) throw new ServiceError('validation', `Company ${sourceId} exists on more than one PSA connection: name connection_id.`, { details: { field: 'connection_id' } });
    return found[0];
  }

  /** The name the ISV's book gives a customer (an audit entry's label), or null for a ref it does not hold. */
  async customerName(tenantId: string, isvId: string, ref: string): Promise<string | null> {
    return (await this.store.customer(tenantId, isvId, ref))?.name ?? null;
  }

  private async customer(tenantId: string, isvId: string, ref: string): Promise<IsvCustomer> {
    const c = await this.store.customer(tenantId, isvId, ref);
    if (!c) throw new ServiceError('not_found', `No customer ${ref} in this ISV's book.`);
    return c;
  }

  async match(access: TenantAccess, isvId: string, customerRef: string, company: PsaCompany, how: string, decidedBy: DecidedBy): Promise<IdentityMatch> {
    const tenantId = access.tenant.id;
    await this.customer(tenantId, isvId, customerRef);
    let added = false;
    const match = await this.transactions.run(async (m) => {
      const existing = await this.store.matchOfEither(m, tenantId, isvId, customerRef, { connectionId: company.connection_id, companySourceId: company.source_id });
      if (existing) {
        if (existing.customerRef === customerRef && existing.connectionId === company.connection_id && existing.companySourceId === company.source_id) return existing;
        throw new ServiceError('request_invalid', existing.customerRef === customerRef
          ? `Customer ${customerRef} is matched to company ${existing.companySourceId} already: unset it first.`
          : `Company ${company.source_id} is matched to customer ${existing.customerRef} already: unset it first.`);
      }
      await this.store.deleteSkip(m, tenantId, isvId, 'isv_customer', customerRef);
      await this.store.deleteSkip(m, tenantId, isvId, 'psa_company', companyKey(company.connection_id, company.source_id));
      added = true;
      return this.store.insertMatch(m, { tenantId, isvId, customerRef, connectionId: company.connection_id, companySourceId: company.source_id, how, decidedBy });
    });
    if (added) await this.changes.publish('identity.matches_changed', { tenantId }, { tenantId });
    return match;
  }

  async skip(access: TenantAccess, isvId: string, subject: { customerRef?: string | null; company?: PsaCompany | null }, decidedBy: DecidedBy): Promise<void> {
    const tenantId = access.tenant.id;
    const [side, key] = this.subjectOf(subject);
    if (side === 'isv_customer') await this.customer(tenantId, isvId, key);
    const matched = await this.store.matchOf(tenantId, isvId, this.matchKeyOf(side, key, subject));
    if (matched) throw new ServiceError('request_invalid', 'This row is matched: unset it before skipping it.');
    await this.store.insertSkip({ tenantId, isvId, side, subject: key, decidedBy });
  }

  /** Back to Needs match: removes the match or the skip of the subject, and nothing else. */
  async unset(access: TenantAccess, isvId: string, subject: { customerRef?: string | null; company?: PsaCompany | null }): Promise<boolean> {
    const tenantId = access.tenant.id;
    const [side, key] = this.subjectOf(subject);
    const out = await this.transactions.run(async (m) => {
      const skip = await this.store.deleteSkip(m, tenantId, isvId, side, key);
      const match = await this.store.deleteMatchOf(m, tenantId, isvId, this.matchKeyOf(side, key, subject));
      return { changed: skip || match, unmatched: match };
    });
    if (out.unmatched) await this.changes.publish('identity.matches_changed', { tenantId }, { tenantId });
    return out.changed;
  }

  /** How the store finds the match of a subject: by the customer's ref, or by the company's connection and source id. */
  private matchKeyOf(side: IdentitySide, key: string, subject: { company?: PsaCompany | null }): { customerRef: string } | { connectionId: string; companySourceId: string } {
    return side === 'isv_customer' ? { customerRef: key } : { connectionId: subject.company!.connection_id, companySourceId: subject.company!.source_id };
  }

  private subjectOf(subject: { customerRef?: string | null; company?: PsaCompany | null }): ['isv_customer' | 'psa_company', string] {
    if (subject.customerRef) return ['isv_customer', subject.customerRef];
    return ['psa_company', companyKey(subject.company!.connection_id, subject.company!.source_id)];
  }

  /** Adds a customer the ISV created (import, company create) to its book. */
  async addCustomer(tenantId: string, isvId: string, c: BookCustomer): Promise<void> {
    await this.store.upsertCustomer({ tenantId, isvId, ref: c.ref, name: c.name, normalizedName: normalizeName(c.name), domain: c.domain ?? null });
  }

  // ---- company resolution for writes ----------------------------------------------------------

  /**
   * The PSA company a write names on one connection: the caller's identity match first (a book
   * customer of that name or ref, matched on this connection), then a unique PSA name (exact, else the
   * normal form). Two or more: company_match_ambiguous with the candidates and how to settle it.
   * Null: no company of that name (the connector's rules decide).
   */
  async resolveCompany(c: Connection, isvId: string | null, name: string): Promise<string | null> {
    const wanted = normalizeName(name);
    // One round trip: the caller's matched company (rank 0), else companies of exactly that name (rank 1).
    const hits = await this.store.matchedOrNamed(c, isvId, wanted, name);
    if (hits[0]?.rank === 0) return hits[0].source_id;
    let rows: PsaCompany[] = hits;
    if (rows.length === 0) {
      const all = await this.store.companiesOfConnection(c);
      rows = all.filter((r) => normalizeName(r.name) === wanted);
    }
    if (rows.length > 1) throw ambiguous(name, rows);
    return rows[0]?.source_id ?? null;
  }
}

/** More than one company matches: nothing is created; a match in identity settles it. */
export function ambiguous(name: string, rows: PsaCompany[]): ServiceError {
  const candidates = rows.map((r) => ({ source_id: r.source_id, name: r.name, identifier: r.identifier }));
  return new ServiceError('company_match_ambiguous',
    `${rows.length} companies are named "${name}"; nothing was created. Match your customer to one of them (POST /tenants/{tenant_id}/identity/match with its source_id) and send the request again.`,
    { details: { field: 'company_name', candidates } });
}

/** The PSA company a request names among the profiles: by source id, on the one PSA connection or the one it names. */
function pickCompany(profiles: CompanyProfile[], sourceId: string, connectionId?: string | null): CompanyProfile {
  const found = profiles.filter((c) => c.source_id === sourceId && (!connectionId || c.connection_id === connectionId));
  if (found.length === 0) throw new ServiceError('not_found', `No PSA company ${sourceId} in this tenant.`);
  if (found.length > 1) throw new ServiceError('validation', `Company ${sourceId} exists on more than one PSA connection: name connection_id.`, { details: { field: 'connection_id' } });
  return found[0];
}

function groupBy<T>(items: T[], key: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const i of items) {
    const k = key(i);
    const list = out.get(k);
    if (list) list.push(i); else out.set(k, [i]);
  }
  return out;
}
