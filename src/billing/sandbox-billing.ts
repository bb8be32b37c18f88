/**
 * The sandbox ISV's billing fixtures (fixtures/<slug>/isv-billing.json; docs/architecture.md, Sandbox): its
 * agreement-line mappings, cost rows and partner minimums. Cost periods are calendar months relative
 * to the day they are seeded (`month: 0` the current one, `-1` the previous one), so the sandbox always
 * shows the current and the previous month. Rows that exist stay (a restart changes nothing).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { DataSource } from 'typeorm';
import { z } from 'zod';
import { fixturesDir } from '../shared/project-root';
import { roundMoney } from './billing-rules';
import { SandboxBillingStore } from './sandbox-billing.store';
import { Transactions } from '../db/transactions';

const Fixture = z.object({
  _comment: z.string().optional(),
  products: z.array(z.object({ ref: z.string(), name: z.string(), sku: z.string() }).strict()),
  mappings: z.array(z.object({
    _comment: z.string().optional(), vendor_product_ref: z.string(), status: z.enum(['mapped', 'unmapped']),
    agreement_id: z.string().optional(), agreement_line_ref: z.string().optional(),
  }).strict()),
  costs: z.array(z.object({
    month: z.number().int().max(0), external_customer_ref: z.string(), product_source_id: z.string(),
    actual_quantity: z.number(), billable_quantity: z.number(), currency: z.string(), msp_cost_unit: z.number(),
  }).strict()),
  partner_minimums: z.array(z.object({
    month: z.number().int().max(0), product_source_id: z.string(), product_name: z.string().optional(), currency: z.string(), minimum_amount: z.number(),
  }).strict()),
}).strict();

export type SandboxBilling = z.infer<typeof Fixture>;

export function readSandboxBilling(slug: string): SandboxBilling | null {
  const file = path.join(fixturesDir(), slug, 'isv-billing.json');
  return fs.existsSync(file) ? Fixture.parse(JSON.parse(fs.readFileSync(file, 'utf8'))) : null;
}

/** The calendar month `offset` months from `now` (UTC), as `YYYY-MM-DD` days. */
export function monthPeriod(offset: number, now = new Date()): { start: string; end: string } {
  const first = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + offset, 1));
  const last = new Date(Date.UTC(first.getUTCFullYear(), first.getUTCMonth() + 1, 0));
  return { start: first.toISOString().slice(0, 10), end: last.toISOString().slice(0, 10) };
}

export async function seedSandboxBilling(ds: DataSource, slug: string, tenantId: string, isvId: string, psaConnectionId: string | null, now = new Date()): Promise<void> {
  const fixture = readSandboxBilling(slug);
  if (!fixture) return;
  const store = new SandboxBillingStore();
  await new Transactions(ds).run(async (m) => {
    for (const mp of fixture.mappings) {
      const mapped = mp.status === 'mapped';
      if (mapped && !psaConnectionId) continue;
      await store.addMapping(m, {
        tenantId, isvId, vendorProductRef: mp.vendor_product_ref, status: mp.status, connectionId: mapped ? psaConnectionId : null,
        agreementSourceId: mapped ? mp.agreement_id ?? null : null, lineSourceId: mapped ? mp.agreement_line_ref ?? null : null,
      });
    }
    const names = new Map(fixture.products.map((p) => [p.ref, p.name]));
    for (const c of fixture.costs) {
      const p = monthPeriod(c.month, now);
      await store.addCost(m, {
        tenantId, isvId, customerRef: c.external_customer_ref, productSourceId: c.product_source_id, productName: names.get(c.product_source_id) ?? null,
        periodStart: p.start, periodEnd: p.end, actualQuantity: c.actual_quantity, billableQuantity: c.billable_quantity, currency: c.currency,
        mspCostUnit: c.msp_cost_unit, mspCostExtended: roundMoney(c.msp_cost_unit * c.billable_quantity),
      });
    }
    for (const pm of fixture.partner_minimums) {
      const p = monthPeriod(pm.month, now);
      await store.addMinimum(m, {
        tenantId, isvId, productSourceId: pm.product_source_id, productName: pm.product_name ?? null, periodStart: p.start, periodEnd: p.end,
        currency: pm.currency, minimumAmount: pm.minimum_amount,
      });
    }
  });
}
