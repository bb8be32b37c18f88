/**
 * Reconciliation of one period (design.md section 12): per PSA company and catalogue product, what
 * the ISVs report (cost rows landed on an agreement line, cost-resolution.ts), what the active
 * agreements bill (line quantity x price), and what the distributor subscriptions hold (a distributor
 * company is the PSA company of the same normalised name; a distributor product the catalogue product
 * of the same normalised name). Line and subscription figures are monthly and multiplied by the
 * calendar months the period touches; only `active` subscriptions count (not trials).
 *
 * - msp_cost = ISV cost (msp_cost_extended) + distributor cost (partner cost x quantity x months)
 * - revenue = agreement quantity x unit price x months; margin = revenue - msp_cost
 * - a partner minimum's shortfall = max(0, minimum - the ISV's reported cost for that product in it)
 */
import type { DataSource } from 'typeorm';
import type { z } from 'zod';
import { normalizeName } from '../identity/normalize';
import { compareNames, compareVendorIds, monthsOf, roundMoney } from './billing-rules';
import type { Reconciliation, ReconciliationRow } from './billing.schemas';
import { resolveCostRows, unresolvedOut, type PeriodFilter } from './cost-resolution';

type Row = z.infer<typeof ReconciliationRow>;
type Difference = Row['differences'][number];

interface Acc {
  company: Row['company'];
  product: { source_id: string | null; name: string | null; isv_product_refs: Set<string> };
  agreementSourceId: string | null;
  lines: Set<string>;
  isv: number | null;
  agreement: number | null;
  unitPrice: number | null;
  subscription: number | null;
  isvCost: number;
  distributorCost: number;
  revenue: number;
}

const add = (a: number | null, b: number) => (a ?? 0) + b;

export class ReconciliationService {
  constructor(private readonly ds: DataSource) {}

  async reconcile(tenantId: string, period: PeriodFilter): Promise<z.infer<typeof Reconciliation>> {
    const months = monthsOf(period.start, period.end);
    const [costs, lines, subscriptions, psaCompanies, psaProducts, minimums] = await Promise.all([
      resolveCostRows(this.ds, tenantId, period),
      this.ds.query(
        `SELECT l.connection_id, l.agreement_source_id, l.source_id, l.product_source_id, COALESCE(p.name, l.product_name) AS product_name,
                l.quantity, l.unit_price, a.company_source_id, a.company_name,
                ((l.effective_start IS NULL OR substr(l.effective_start, 1, 10) <= $3) AND (l.effective_end IS NULL OR substr(l.effective_end, 1, 10) >= $2)) AS in_period
           FROM agreement_lines l
           JOIN agreements a ON a.tenant_id = l.tenant_id AND a.connection_id = l.connection_id AND a.source_id = l.agreement_source_id AND a.status = 'active'
           LEFT JOIN products p ON p.tenant_id = l.tenant_id AND p.connection_id = l.connection_id AND p.source_id = l.product_source_id
          WHERE l.tenant_id = $1`, [tenantId, period.start, period.end]) as Promise<Record<string, any>[]>,
      this.ds.query(
        `SELECT s.company_source_id, s.product_source_id, COALESCE(pr.name, s.product_name) AS product_name, s.quantity, s.partner_cost, co.name AS company_name
           FROM subscriptions s
           LEFT JOIN companies co ON co.tenant_id = s.tenant_id AND co.connection_id = s.connection_id AND co.source_id = s.company_source_id
           LEFT JOIN products pr ON pr.tenant_id = s.tenant_id AND pr.connection_id = s.connection_id AND pr.source_id = s.product_source_id
          WHERE s.tenant_id = $1 AND lower(s.status) = 'active'
            AND (s.start_date IS NULL OR substr(s.start_date, 1, 10) <= $3) AND (s.end_date IS NULL OR substr(s.end_date, 1, 10) >= $2)`,
        [tenantId, period.start, period.end]) as Promise<Record<string, any>[]>,
      this.ds.query(`SELECT co.connection_id, co.source_id, co.name FROM companies co JOIN connections c ON c.id = co.connection_id AND c.kind = 'psa' WHERE co.tenant_id = $1`, [tenantId]) as Promise<Record<string, any>[]>,
      this.ds.query(`SELECT p.connection_id, p.source_id, p.name FROM products p JOIN connections c ON c.id = p.connection_id AND c.kind = 'psa' WHERE p.tenant_id = $1`, [tenantId]) as Promise<Record<string, any>[]>,
      this.ds.query('SELECT isv_id, product_source_id, product_name, currency, minimum_amount, period_start, period_end FROM partner_minimums WHERE tenant_id = $1 AND period_start >= $2 AND period_end <= $3 ORDER BY product_source_id, period_start',
        [tenantId, period.start, period.end]) as Promise<Record<string, any>[]>,
    ]);

    const rows = new Map<string, Acc>();
    const row = (connectionId: string | null, companyKey: string, companyName: string | null, companySourceId: string | null, productKey: string, productSourceId: string | null, productName: string | null): Acc => {
      const key = `${connectionId ?? ''}|${companyKey}|${productKey}`;
      let acc = rows.get(key);
      if (!acc) {
        acc = {
          company: { source_id: companySourceId, name: companyName, connection_id: connectionId },
          product: { source_id: productSourceId, name: productName, isv_product_refs: new Set() },
          agreementSourceId: null, lines: new Set(), isv: null, agreement: null, unitPrice: null, subscription: null, isvCost: 0, distributorCost: 0, revenue: 0,
        };
        rows.set(key, acc);
      }
      return acc;
    };

    const lineById = new Map(lines.map((l) => [`${l.connection_id}|${l.source_id}`, l]));
    for (const l of lines) {
      if (!l.in_period) continue;
      const acc = row(l.connection_id, l.company_source_id ?? '', l.company_name, l.company_source_id, `p:${l.product_source_id ?? l.source_id}`, l.product_source_id, l.product_name);
      const qty = l.quantity == null ? 0 : Number(l.quantity);
      const price = l.unit_price == null ? 0 : Number(l.unit_price);
      acc.agreement = add(acc.agreement, qty);
      acc.unitPrice ??= l.unit_price == null ? null : price;
      acc.agreementSourceId ??= l.agreement_source_id;
      acc.lines.add(l.source_id);
      acc.revenue += qty * price * months;
    }

    const companyName = new Map(psaCompanies.map((c) => [`${c.connection_id}|${c.source_id}`, c.name as string]));
    for (const c of costs) {
      if (c.reason) continue;
      const name = companyName.get(`${c.connectionId}|${c.companySourceId}`) ?? null;
      const line = c.lineSourceId ? lineById.get(`${c.connectionId}|${c.lineSourceId}`) : undefined;
      const acc = line
        ? row(c.connectionId, c.companySourceId!, line.company_name ?? name, c.companySourceId, `p:${line.product_source_id ?? line.source_id}`, line.product_source_id, line.product_name)
        : row(c.connectionId, c.companySourceId!, name, c.companySourceId, `isv:${c.isvId}:${c.isvProductRef}`, null, null);
      acc.product.isv_product_refs.add(c.isvProductRef);
      acc.isv = add(acc.isv, c.billableQuantity);
      acc.isvCost += c.mspCostExtended;
    }

    // Distributor companies and products meet the PSA's by normalised name, when the name is unique there.
    const unique = <T extends Record<string, any>>(items: T[]) => {
      const by = new Map<string, T | null>();
      for (const i of items) {
        const n = normalizeName(String(i.name ?? ''));
        by.set(n, by.has(n) ? null : i);
      }
      return by;
    };
    const psaCompanyByName = unique(psaCompanies);
    const psaProductByName = unique(psaProducts);
    for (const s of subscriptions) {
      const company = psaCompanyByName.get(normalizeName(String(s.company_name ?? ''))) ?? null;
      const product = psaProductByName.get(normalizeName(String(s.product_name ?? ''))) ?? null;
      const connectionId = company?.connection_id ?? null;
      const productMatch = product && (!company || product.connection_id === company.connection_id) ? product : null;
      const acc = row(connectionId, company ? company.source_id : `d:${s.company_source_id}`, company?.name ?? s.company_name ?? null, company?.source_id ?? null,
        productMatch ? `p:${productMatch.source_id}` : `d:${s.product_source_id}`, productMatch?.source_id ?? null, productMatch?.name ?? s.product_name ?? null);
      const qty = s.quantity == null ? 0 : Number(s.quantity);
      acc.subscription = add(acc.subscription, qty);
      acc.distributorCost += (s.partner_cost == null ? 0 : Number(s.partner_cost)) * qty * months;
    }

    const out: Row[] = [...rows.values()].map((a) => {
      const differences: Difference[] = [];
      if (a.agreement == null && (a.isv != null || a.subscription != null)) differences.push('not_billed');
      if (a.agreement != null && a.isv != null && Math.abs(a.isv - a.agreement * months) > 1e-9) differences.push('isv_vs_agreement');
      if (a.agreement != null && a.subscription != null && Math.abs(a.subscription - a.agreement) > 1e-9) differences.push('subscription_vs_agreement');
      const mspCost = a.isvCost + a.distributorCost;
      return {
        company: a.company, product: { ...a.product, isv_product_refs: [...a.product.isv_product_refs].sort() },
        agreement_source_id: a.agreementSourceId, line_source_ids: [...a.lines].sort(compareVendorIds),
        isv_billable_quantity: a.isv, agreement_quantity: a.agreement, unit_price: a.unitPrice, subscription_quantity: a.subscription,
        isv_cost: roundMoney(a.isvCost), distributor_cost: roundMoney(a.distributorCost), msp_cost: roundMoney(mspCost),
        revenue: roundMoney(a.revenue), margin: roundMoney(a.revenue - mspCost), differences,
      };
    }).sort((x, y) => compareNames(x.company.name ?? '', y.company.name ?? '') || compareNames(x.product.name ?? '', y.product.name ?? ''));

    // A minimum counts the ISV's cost for the product in the minimum's period, resolved or not.
    const partnerMinimums = minimums.map((m) => {
      const reported = costs.filter((c) => c.isvId === m.isv_id && c.isvProductRef === m.product_source_id && c.periodStart >= m.period_start && c.periodEnd <= m.period_end)
        .reduce((s, c) => s + c.mspCostExtended, 0);
      const minimum = Number(m.minimum_amount);
      return {
        isv_id: m.isv_id, product_source_id: m.product_source_id, product_name: m.product_name ?? null, currency: m.currency,
        minimum_amount: minimum, reported_cost: roundMoney(reported), shortfall: roundMoney(Math.max(0, minimum - reported)),
      };
    });

    const unresolved = costs.filter((c) => c.reason);
    const sum = (f: (r: Row) => number) => roundMoney(out.reduce((s, r) => s + f(r), 0));
    const shortfall = roundMoney(partnerMinimums.reduce((s, m) => s + m.shortfall, 0));
    const margin = sum((r) => r.margin);
    return {
      period_start: period.start, period_end: period.end, months,
      currencies: [...new Set(costs.map((c) => c.currency))].sort(),
      rows: out,
      partner_minimums: partnerMinimums,
      unresolved: unresolved.map(unresolvedOut),
      totals: {
        isv_cost: sum((r) => r.isv_cost), distributor_cost: sum((r) => r.distributor_cost), msp_cost: sum((r) => r.msp_cost),
        revenue: sum((r) => r.revenue), margin, partner_minimum_shortfall: shortfall, margin_after_minimums: roundMoney(margin - shortfall),
        unresolved_isv_cost: roundMoney(unresolved.reduce((s, r) => s + r.mspCostExtended, 0)),
      },
    };
  }
}
