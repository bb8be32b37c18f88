/**
 * Agreement-line mappings (docs/architecture.md, Agreements and billing): an ISV pairs one of its products with a line of an
 * MSP agreement (`mapped`, checked against an existing line of an active agreement on a PSA connection
 * of the tenant), or records that the product is deliberately not billed through an agreement
 * (`unmapped`). An ISV maps only its own products (`vendor_key` is its own ISV id). Suggest ranks
 * candidate lines and never maps.
 */
import type { DataSource } from 'typeorm';
import type { z } from 'zod';
import { todayUtc } from '../agreements/agreement-lines.service';
import type { TenantAccess } from '../access/access.service';
import { ServiceError } from '../errors/service-error';
import { normalizeName } from '../identity/normalize';
import { isSafeText } from '../shared/request';
import { compareVendorIds } from './billing-rules';
import { LineMappingsStore } from './line-mappings.store';
import type { AgreementLineMappingOut, CreateAgreementLineMappingBody, MappingCandidate, MappingCreated, MappingsQuery, SuggestAgreementLineMappingBody } from './billing.schemas';
import { CommittedChanges, type CommittedReaction } from '../shared/committed-changes';
import { Transactions } from '../db/transactions';

type Mapping = z.infer<typeof AgreementLineMappingOut>;
type Candidate = z.infer<typeof MappingCandidate>;

function mappingOut(r: Record<string, any>): Mapping {
  return {
    id: r.id, vendor_key: r.isv_id, vendor_product_ref: r.vendor_product_ref, status: r.status,
    agreement_id: r.agreement_source_id ?? null, agreement_line_ref: r.line_source_id ?? null, psa_vendor: r.connector ?? null,
    connection_id: r.connection_id ?? null, company_source_id: r.company_source_id ?? null, company_name: r.company_name ?? null,
    line_product_source_id: r.line_product_source_id ?? null, line_product_name: r.line_product_name ?? null,
    decided_by: r.decided_by, created_at: new Date(r.created_at).toISOString(),
  };
}

const tokens = (s: string) => new Set(normalizeName(s).split(' ').filter((w) => w.length > 1));

function jaccard(a: Set<string>, b: Set<string>): number {
  if (!a.size || !b.size) return 0;
  let both = 0;
  for (const t of a) if (b.has(t)) both++;
  return both / (a.size + b.size - both);
}

declare module '../shared/committed-changes' {
  interface ChangeKinds {
    /** A tenant's line mappings changed (charges are recomputed from them). */
    'billing.line_mappings_changed': CommittedReaction<{ tenantId: string }>;
  }
}

export class LineMappingsService {
  private readonly store: LineMappingsStore;

  /** `changes`: where a change of a tenant's line mappings is told (`billing.line_mappings_changed`). */
  /** What commits together (src/db/transactions.ts). */
  private readonly transactions: Transactions;
  constructor(ds: DataSource, private readonly vendorNow: () => number = Date.now, private readonly changes: CommittedChanges = new CommittedChanges()) {
    this.transactions = new Transactions(ds);
    this.store = new LineMappingsStore(ds);
  }

  private ownKey(isvId: string, vendorKey: string): void {
    if (vendorKey !== isvId) {
      throw new ServiceError('validation', `vendor_key must be your own ISV id (${isvId}); an ISV maps only its own products.`, {
        details: { field: 'vendor_key', problems: [{ field: 'vendor_key', message: `must be your own ISV id (${isvId})` }] },
      });
    }
  }

  async create(access: TenantAccess, isvId: string, b: z.infer<typeof CreateAgreementLineMappingBody>): Promise<z.infer<typeof MappingCreated>> {
    this.ownKey(isvId, b.vendor_key);
    const tenantId = access.tenant.id;
    let target: { connection_id: string; agreement_source_id: string; line_source_id: string } | null = null;
    if (b.status === 'mapped') target = await this.activeLine(access, b.agreement_id!, b.agreement_line_ref!, b.psa_vendor ?? null);
    const out = await this.transactions.run(async (m) => {
      const existing = await this.store.ofProductForUpdate(m, tenantId, isvId, b.vendor_product_ref);
      const same = existing.find((e) => e.status === b.status && e.connection_id === (target?.connection_id ?? null) && e.line_source_id === (target?.line_source_id ?? null));
      if (same) return { id: same.id, already: true, removedUnmapped: false };
      if (b.status === 'unmapped' && existing.some((e) => e.status === 'mapped')) {
        throw new ServiceError('request_invalid', `Product ${b.vendor_product_ref} is mapped to ${existing.filter((e) => e.status === 'mapped').length} agreement line(s); delete those mappings before marking it unmapped.`, {
          details: { mappings: existing.filter((e) => e.status === 'mapped').map((e) => e.id) },
        });
      }
      const unmapped = existing.filter((e) => e.status === 'unmapped');
      if (b.status === 'mapped' && unmapped.length) await this.store.removeIds(m, unmapped.map((e) => e.id));
      const id = await this.store.insertMapping(m, [tenantId, isvId, b.vendor_product_ref, b.status, target?.connection_id ?? null, target?.agreement_source_id ?? null, target?.line_source_id ?? null]);
      return { id, already: false, removedUnmapped: b.status === 'mapped' && unmapped.length > 0 };
    });
    if (!out.already) await this.changes.publish('billing.line_mappings_changed', { tenantId }, { tenantId });
    const row = await this.store.one(out.id);
    return { ...mappingOut(row), already_existed: out.already, removed_unmapped: out.removedUnmapped };
  }

  /** `mapped` needs an existing line of an active agreement on a PSA connection of this tenant. */
  private async activeLine(access: TenantAccess, agreementId: string, lineRef: string, psaVendor: string | null) {
    const psa = access.connections.filter((c) => c.kind === 'psa' && (!psaVendor || c.connector === psaVendor));
    const ids = psa.map((c) => c.id);
    const agreements: { connection_id: string; status: string }[] = ids.length && isSafeText(agreementId)
      ? await this.store.agreements(access.tenant.id, ids, agreementId)
      : [];
    const field = (name: string, message: string) => new ServiceError('validation', `${name}: ${message}`, { details: { field: name, problems: [{ field: name, message }] } });
    if (!agreements.length) throw field('agreement_id', `no agreement ${JSON.stringify(agreementId)} in this tenant's PSA${psaVendor ? ` (${psaVendor})` : ''}`);
    const active = agreements.find((a) => a.status === 'active');
    if (!active) throw field('agreement_id', `agreement ${agreementId} is ${agreements[0].status}; only a line of an active agreement can be mapped`);
    const lines: { agreement_source_id: string }[] = isSafeText(lineRef)
      ? await this.store.lineAgreement(access.tenant.id, active.connection_id, lineRef)
      : [];
    if (!lines.length) throw field('agreement_line_ref', `no line ${JSON.stringify(lineRef)} in this PSA`);
    if (lines[0].agreement_source_id !== agreementId) throw field('agreement_line_ref', `line ${lineRef} belongs to agreement ${lines[0].agreement_source_id}, not ${agreementId}`);
    return { connection_id: active.connection_id, agreement_source_id: agreementId, line_source_id: lineRef };
  }

  async list(tenantId: string, isvId: string | null, q: z.infer<typeof MappingsQuery>): Promise<Mapping[]> {
    const rows = await this.store.list(tenantId, { isvId, vendorProductRef: q.vendor_product_ref, agreementId: q.agreement_id });
    return rows.map(mappingOut);
  }

  /** Deletes one of the caller's mappings (an MSP key any of its tenant's); 404 for anything else. */
  async remove(tenantId: string, isvId: string | null, id: string, dryRun = false): Promise<boolean> {
    if (dryRun) {
      const found: unknown[] = /^[0-9a-f-]{36}$/i.test(id)
        ? await this.store.mappingRows(tenantId, id, isvId)
        : [];
      return found.length > 0;
    }
    const rows = /^[0-9a-f-]{36}$/i.test(id) ? await this.store.deleteMapping(tenantId, id, isvId) : [];
    if (rows.length) await this.changes.publish('billing.line_mappings_changed', { tenantId }, { tenantId });
    return rows.length > 0;
  }

  /**
   * Candidate lines of active agreements, ranked: the same SKU as the line's catalogue product
   * (0.5), the same product name (0.3) or a similar one (token overlap, up to 0.2), and a customer
   * of the ISV's book matched to the agreement's company that reports this product (0.2).
   */
  async suggest(access: TenantAccess, isvId: string, b: z.infer<typeof SuggestAgreementLineMappingBody>): Promise<Candidate[]> {
    this.ownKey(isvId, b.vendor_key);
    const psa = access.connections.filter((c) => c.kind === 'psa');
    if (!psa.length) return [];
    const lines = await this.store.activeLines(access.tenant.id, psa.map((c) => c.id), todayUtc(this.vendorNow));
    const reporting = await this.store.reportingCompanies(access.tenant.id, isvId, b.vendor_product_ref);
    const reports = new Set(reporting.map((r) => `${r.connection_id}|${r.company_source_id}`));
    let onlyCompany: string | null = null;
    if (b.external_customer_ref) {
      const m = await this.store.matchedCompany(access.tenant.id, isvId, b.external_customer_ref);
      if (!m) return [];
      onlyCompany = `${m.connection_id}|${m.company_source_id}`;
    }
    const mapped = await this.store.mappedLines(access.tenant.id, isvId, b.vendor_product_ref);
    const already = new Set(mapped.map((m) => `${m.connection_id}|${m.line_source_id}`));
    const name = b.product_name ? normalizeName(b.product_name) : null;
    const nameTokens = b.product_name ? tokens(b.product_name) : new Set<string>();
    const sku = b.product_sku?.trim().toLowerCase() || null;
    const connector = new Map(psa.map((c) => [c.id, c.connector]));
    const out: Candidate[] = [];
    for (const l of lines) {
      const company = `${l.connection_id}|${l.company_source_id}`;
      if (onlyCompany && company !== onlyCompany) continue;
      const lineName: string = l.catalogue_name ?? l.product_name ?? '';
      const reasons: Candidate['reasons'] = [];
      let score = 0;
      if (sku && l.sku && String(l.sku).trim().toLowerCase() === sku) { reasons.push('same_sku'); score += 0.5; }
      if (name && lineName && normalizeName(lineName) === name) { reasons.push('same_product_name'); score += 0.3; } else {
        const sim = jaccard(nameTokens, tokens(lineName));
        if (sim >= 0.3) { reasons.push('similar_product_name'); score += 0.2 * sim; }
      }
      if (reports.has(company)) { reasons.push('customer_reports_product'); score += 0.2; }
      if (!reasons.length || (reasons.length === 1 && reasons[0] === 'customer_reports_product')) continue;
      out.push({
        agreement_id: l.agreement_source_id, agreement_name: l.agreement_name, agreement_line_ref: l.source_id, connection_id: l.connection_id,
        psa_vendor: connector.get(l.connection_id)!, company_source_id: l.company_source_id ?? null, company_name: l.company_name ?? null,
        line_product_source_id: l.product_source_id ?? null, line_product_name: lineName || null, line_sku: l.sku ?? null,
        quantity: l.quantity == null ? null : Number(l.quantity), score: Math.round(score * 1000) / 1000, reasons,
        already_mapped: already.has(`${l.connection_id}|${l.source_id}`),
      });
    }
    out.sort((a, b2) => b2.score - a.score || compareVendorIds(a.agreement_id, b2.agreement_id) || compareVendorIds(a.agreement_line_ref, b2.agreement_line_ref));
    return out.slice(0, b.limit);
  }
}
