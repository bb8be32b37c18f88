/**
 * The sandbox ISV's billing rows (sandbox-billing.ts): each is added once, inside the seeding's
 * transaction; a row that exists stays as it is (a restart changes nothing).
 */
import type { EntityManager } from 'typeorm';

export interface SeededMapping {
  tenantId: string; isvId: string; vendorProductRef: string; status: 'mapped' | 'unmapped';
  connectionId: string | null; agreementSourceId: string | null; lineSourceId: string | null;
}
export interface SeededCost {
  tenantId: string; isvId: string; customerRef: string; productSourceId: string; productName: string | null; periodStart: string; periodEnd: string;
  actualQuantity: number; billableQuantity: number; currency: string; mspCostUnit: number; mspCostExtended: number;
}
export interface SeededMinimum {
  tenantId: string; isvId: string; productSourceId: string; productName: string | null; periodStart: string; periodEnd: string;
  currency: string; minimumAmount: number;
}

export class SandboxBillingStore {
  async addMapping(m: EntityManager, r: SeededMapping): Promise<void> {
    await m.query(
      `INSERT INTO agreement_line_mappings (tenant_id, isv_id, vendor_product_ref, status, connection_id, agreement_source_id, line_source_id, decided_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 'isv') ON CONFLICT DO NOTHING`,
      [r.tenantId, r.isvId, r.vendorProductRef, r.status, r.connectionId, r.agreementSourceId, r.lineSourceId]);
  }

  async addCost(m: EntityManager, r: SeededCost): Promise<void> {
    await m.query(
      `INSERT INTO isv_costs (tenant_id, isv_id, external_customer_ref, product_source_id, product_name, period_start, period_end, actual_quantity, billable_quantity, currency, msp_cost_unit, msp_cost_extended)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT ON CONSTRAINT uq_isv_costs_row DO NOTHING`,
      [r.tenantId, r.isvId, r.customerRef, r.productSourceId, r.productName, r.periodStart, r.periodEnd,
        r.actualQuantity, r.billableQuantity, r.currency, r.mspCostUnit, r.mspCostExtended]);
  }

  async addMinimum(m: EntityManager, r: SeededMinimum): Promise<void> {
    await m.query(
      `INSERT INTO partner_minimums (tenant_id, isv_id, product_source_id, product_name, period_start, period_end, currency, minimum_amount)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT ON CONSTRAINT uq_partner_minimums_row DO NOTHING`,
      [r.tenantId, r.isvId, r.productSourceId, r.productName, r.periodStart, r.periodEnd, r.currency, r.minimumAmount]);
  }
}
