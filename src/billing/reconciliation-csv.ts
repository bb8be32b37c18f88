/**
 * The reconciliation as CSV (docs/architecture.md, Agreements and billing): the same figures as the JSON
 * answer, one line per company and product (`kind` row), then each partner minimum with its shortfall,
 * each unresolved cost row with its reason, and the totals. RFC 4180 quoting; a text cell that a
 * spreadsheet would read as a formula (= + - @ at its start) is prefixed with an apostrophe.
 */
import type { z } from 'zod';
import type { Reconciliation } from './billing.schemas';

type Report = z.infer<typeof Reconciliation>;
type Cell = string | number | null | undefined;

export const RECONCILIATION_CSV_COLUMNS = [
  'kind', 'company', 'company_source_id', 'product', 'product_source_id', 'isv_products', 'agreement_source_id', 'line_source_ids',
  'isv_billable_quantity', 'agreement_quantity', 'unit_price', 'subscription_quantity', 'isv_cost', 'distributor_cost', 'msp_cost',
  'revenue', 'margin', 'partner_minimum_shortfall', 'note',
] as const;
type Column = (typeof RECONCILIATION_CSV_COLUMNS)[number];

function cell(v: Cell): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') return String(Math.round(v * 100) / 100 === v ? v : Number(v.toFixed(6)));
  const text = /^[=+\-@\t\r]/.test(v) ? `'${v}` : v;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function line(values: Partial<Record<Column, Cell>>): string {
  return RECONCILIATION_CSV_COLUMNS.map((c) => cell(values[c])).join(',');
}

export function reconciliationCsv(r: Report): string {
  const out = [RECONCILIATION_CSV_COLUMNS.join(',')];
  for (const row of r.reconciliation) {
    out.push(line({
      kind: 'row', company: row.company.name, company_source_id: row.company.source_id, product: row.product.name, product_source_id: row.product.source_id,
      isv_products: row.product.isv_product_refs.join(' '), agreement_source_id: row.agreement_source_id, line_source_ids: row.line_source_ids.join(' '),
      isv_billable_quantity: row.isv_billable_quantity, agreement_quantity: row.agreement_quantity, unit_price: row.unit_price,
      subscription_quantity: row.subscription_quantity, isv_cost: row.isv_cost, distributor_cost: row.distributor_cost, msp_cost: row.msp_cost,
      revenue: row.revenue, margin: row.margin, note: row.differences.join(' '),
    }));
  }
  for (const m of r.partner_minimums) {
    out.push(line({ kind: 'partner_minimum', product: m.product_name, product_source_id: m.product_source_id, isv_cost: m.reported_cost, partner_minimum_shortfall: m.shortfall, note: `minimum ${m.minimum_amount} ${m.currency}` }));
  }
  for (const u of r.unresolved) {
    out.push(line({ kind: 'unresolved', company: u.external_customer_ref, product_source_id: u.product_source_id, isv_billable_quantity: u.billable_quantity, isv_cost: u.msp_cost_extended, note: `${u.reason}: ${u.message}` }));
  }
  const t = r.totals;
  out.push(line({
    kind: 'total', isv_cost: t.isv_cost, distributor_cost: t.distributor_cost, msp_cost: t.msp_cost, revenue: t.revenue, margin: t.margin,
    partner_minimum_shortfall: t.partner_minimum_shortfall, note: `margin after minimums ${t.margin_after_minimums}; unresolved cost ${t.unresolved_isv_cost}`,
  }));
  return `${out.join('\r\n')}\r\n`;
}
