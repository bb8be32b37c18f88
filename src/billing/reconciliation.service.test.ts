/**
 * The reconciliation's merge rules on the real store, for the cases the sandbox fixtures do not hold:
 * one product on two lines of one company, numeric line ids, a price only on the second line, a line of
 * an inactive agreement and a line that ended, a cost row unmapped on purpose, and distributor
 * companies met by normalised name (and not met when two PSA companies share the name).
 */
import { randomUUID } from 'node:crypto';
import { openDatabase, type Database } from '../db/database';
import { testDatabaseOptions } from '../../test/support/runtime';
import { ReconciliationService } from './reconciliation.service';
import { storeCostResolutions, storedResolutionIsCurrent } from './cost-resolution.store';

let db: Database;
let tenantId: string;
let isvId: string;
let psa: string;
let dist: string;
const period = { start: '2026-10-01', end: '2026-10-31' };

const q = (sql: string, args: unknown[]) => db.dataSource.query(sql, args);
const record = `raw, raw_hash, synced_at) VALUES`;

beforeAll(async () => {
  db = await openDatabase(testDatabaseOptions());
  tenantId = (await q('INSERT INTO tenants (name, slug) VALUES ($1, $2) RETURNING id', ['Recon MSP', `recon-${randomUUID()}`]))[0].id;
  isvId = (await q('INSERT INTO isvs (name) VALUES ($1) RETURNING id', ['Recon ISV']))[0].id;
  const conn = async (kind: string, connector: string) => (await q(
    `INSERT INTO connections (tenant_id, kind, connector, base_url, credentials_encrypted, status_mapping, settings)
     VALUES ($1, $2, $3, 'https://recon.invalid', 'x', '{}', '{}') RETURNING id`, [tenantId, kind, connector]))[0].id as string;
  psa = await conn('psa', 'connectwise');
  dist = await conn('distributor', 'pax8');
  const companies: [string, string, string][] = [
    [psa, '1', 'Contoso Ltd'], [psa, '2', 'Lakeshore Dental'], [psa, '3', 'Lakeshore Dental'],
    [dist, 'd1', 'Contoso, Inc.'], [dist, 'd2', 'Lakeshore Dental LLC'],
  ];
  for (const [c, id, name] of companies) {
    await q(`INSERT INTO companies (tenant_id, connection_id, source_id, name, ${record} ($1, $2, $3, $4, '{}', 'h', now())`, [tenantId, c, id, name]);
  }
  for (const [c, id, name] of [[psa, '50', 'Backup Seat'], [dist, 'dp50', 'Backup seat']]) {
    await q(`INSERT INTO products (tenant_id, connection_id, source_id, name, ${record} ($1, $2, $3, $4, '{}', 'h', now())`, [tenantId, c, id, name]);
  }
  const agreement = async (id: string, status: string, company: string) => q(
    `INSERT INTO agreements (tenant_id, connection_id, source_id, name, status, company_source_id, company_name, ${record} ($1, $2, $3, $3, $4, $5, 'Contoso Ltd', '{}', 'h', now())`,
    [tenantId, psa, id, status, company]);
  await agreement('A1', 'active', '1');
  await agreement('A2', 'active', '1');
  await agreement('A3', 'inactive', '1');
  const line = async (id: string, agreementId: string, qty: number, price: number | null, end: string | null = null) => q(
    `INSERT INTO agreement_lines (tenant_id, connection_id, source_id, agreement_source_id, product_source_id, quantity, unit_price, effective_end, ${record}
     ($1, $2, $3, $4, '50', $5, $6, $7, '{}', 'h', now())`, [tenantId, psa, id, agreementId, qty, price, end]);
  // Line 10 is on A1 and line 9 on A2: in id order 9 comes first (numeric), and it has no price.
  await line('10', 'A1', 4, 5);
  await line('9', 'A2', 3, null);
  await line('11', 'A3', 100, 5); // inactive agreement: not billed
  await line('12', 'A1', 50, 5, '2026-09-30'); // ended before the period
  await q(`INSERT INTO identity_matches (tenant_id, isv_id, customer_ref, connection_id, company_source_id, how, decided_by)
           VALUES ($1, $2, 'cust-1', $3, '1', 'auto_exact_name', 'auto')`, [tenantId, isvId, psa]);
  await q(`INSERT INTO agreement_line_mappings (tenant_id, isv_id, vendor_product_ref, status, connection_id, agreement_source_id, line_source_id, decided_by)
           VALUES ($1, $2, 'backup', 'mapped', $3, 'A1', '10', 'isv')`, [tenantId, isvId, psa]);
  await q(`INSERT INTO agreement_line_mappings (tenant_id, isv_id, vendor_product_ref, status, decided_by)
           VALUES ($1, $2, 'training', 'unmapped', 'isv')`, [tenantId, isvId]);
  const cost = (product: string, qty: number, unit: number) => q(
    `INSERT INTO isv_costs (tenant_id, isv_id, external_customer_ref, product_source_id, period_start, period_end, actual_quantity, billable_quantity, currency, msp_cost_unit, msp_cost_extended)
     VALUES ($1, $2, 'cust-1', $3, $4, $5, $6, $6, 'USD', $7, $8)`, [tenantId, isvId, product, period.start, period.end, qty, unit, qty * unit]);
  await cost('backup', 8, 1.5);
  await cost('training', 2, 10);
  const sub = (id: string, company: string, qty: number) => q(
    `INSERT INTO subscriptions (tenant_id, connection_id, source_id, company_source_id, product_source_id, quantity, partner_cost, status, ${record}
     ($1, $2, $3, $4, 'dp50', $5, 2, 'Active', '{}', 'h', now())`, [tenantId, dist, id, company, qty]);
  await sub('s1', 'd1', 5);
  await sub('s2', 'd1', 2);
  await sub('s3', 'd2', 4);
}, 60_000);
afterAll(async () => { await db?.close(); });

it('merges the lines of one product of a company, in line id order, with the ISV and the distributor side', async () => {
  const r = await new ReconciliationService(db.dataSource).reconcile(tenantId, period);
  const contoso = r.rows.filter((x) => x.company.source_id === '1');
  const backup = contoso.find((x) => x.product.source_id === '50')!;
  // Lines 9 (3, no price) and 10 (4 x 5); not 11 (inactive agreement) nor 12 (ended).
  expect(backup).toMatchObject({
    line_source_ids: ['9', '10'], agreement_source_id: 'A2', unit_price: 5, agreement_quantity: 7, revenue: 20,
    isv_billable_quantity: 8, isv_cost: 12, product: { name: 'Backup Seat', isv_product_refs: ['backup'] },
    // "Contoso, Inc." is Contoso Ltd by normalised name; 5 + 2 seats at 2.
    subscription_quantity: 7, distributor_cost: 14, msp_cost: 26, margin: -6,
    differences: ['isv_vs_agreement'],
  });
  // Unmapped on purpose: billed on no agreement, its own row.
  expect(contoso.find((x) => x.product.isv_product_refs.includes('training'))).toMatchObject({
    product: { source_id: null }, isv_billable_quantity: 2, agreement_quantity: null, isv_cost: 20, revenue: 0, differences: ['not_billed'],
  });
  // "Lakeshore Dental LLC" names two PSA companies: it meets neither.
  expect(r.rows.find((x) => x.subscription_quantity === 4)).toMatchObject({
    company: { source_id: null, connection_id: null, name: 'Lakeshore Dental LLC' }, product: { source_id: '50' }, differences: ['not_billed'],
  });
  expect(r.rows).toHaveLength(3);
  expect(r.totals).toMatchObject({ isv_cost: 32, distributor_cost: 22, revenue: 20, unresolved_isv_cost: 0 });
  expect(r.unresolved).toEqual([]);
});

describe('the stored cost resolution', () => {
  const service = () => new ReconciliationService(db.dataSource);
  const store = () => db.dataSource.transaction((m) => storeCostResolutions(m, tenantId));
  const current = () => db.dataSource.transaction((m) => storedResolutionIsCurrent(m, tenantId));

  it('is current once stored, and answers as the inline resolution does', async () => {
    const inline = await service().reconcile(tenantId, period);
    expect(await current()).toBe(false);
    await store();
    expect(await current()).toBe(true);
    expect(await service().reconcile(tenantId, period)).toEqual(inline);
  });

  it('stays current when a sync re-stamps a row or a cost row changes only its figures, which are read live', async () => {
    await store();
    await q("UPDATE agreements SET synced_at = now(), raw = '{\"x\":1}' WHERE tenant_id = $1", [tenantId]);
    await q("UPDATE isv_costs SET billable_quantity = 9, msp_cost_extended = 13.5 WHERE tenant_id = $1 AND product_source_id = 'backup'", [tenantId]);
    expect(await current()).toBe(true);
    const backup = (await service().reconcile(tenantId, period)).rows.find((x) => x.product.source_id === '50' && x.company.source_id === '1')!;
    expect(backup).toMatchObject({ isv_billable_quantity: 9, isv_cost: 13.5 });
    await q("UPDATE isv_costs SET billable_quantity = 8, msp_cost_extended = 12 WHERE tenant_id = $1 AND product_source_id = 'backup'", [tenantId]);
  });

  // Each change moves where a cost row lands; each is undone after.
  const changes: [string, string, string, (r: Awaited<ReturnType<ReconciliationService['reconcile']>>) => void][] = [
    ['an agreement made inactive', "UPDATE agreements SET status = 'inactive' WHERE tenant_id = $1 AND source_id = 'A1'", "UPDATE agreements SET status = 'active' WHERE tenant_id = $1 AND source_id = 'A1'",
      (r) => expect(r.unresolved.map((u) => [u.product_source_id, u.reason])).toEqual([['backup', 'agreement_inactive']])],
    ['a line that ended', "UPDATE agreement_lines SET effective_end = '2026-09-30' WHERE tenant_id = $1 AND source_id = '10'", "UPDATE agreement_lines SET effective_end = NULL WHERE tenant_id = $1 AND source_id = '10'",
      (r) => expect(r.unresolved.map((u) => u.reason)).toEqual(['agreement_inactive'])],
    ['a mapping set aside', "UPDATE agreement_line_mappings SET status = 'unmapped' WHERE tenant_id = $1 AND vendor_product_ref = 'backup'", "UPDATE agreement_line_mappings SET status = 'mapped' WHERE tenant_id = $1 AND vendor_product_ref = 'backup'",
      (r) => expect(r.rows.find((x) => x.product.isv_product_refs.includes('backup'))).toMatchObject({ product: { source_id: null }, differences: ['not_billed'] })],
    ['an identity match moved', "UPDATE identity_matches SET company_source_id = '2' WHERE tenant_id = $1", "UPDATE identity_matches SET company_source_id = '1' WHERE tenant_id = $1",
      (r) => expect(r.unresolved.map((u) => u.reason)).toEqual(['product_unmapped'])],
    ['a cost row of another product', "UPDATE isv_costs SET product_source_id = 'backup-2' WHERE tenant_id = $1 AND product_source_id = 'backup'", "UPDATE isv_costs SET product_source_id = 'backup' WHERE tenant_id = $1 AND product_source_id = 'backup-2'",
      (r) => expect(r.unresolved.map((u) => [u.product_source_id, u.reason])).toEqual([['backup-2', 'product_unmapped']])],
    ['a new cost row', `INSERT INTO isv_costs (tenant_id, isv_id, external_customer_ref, product_source_id, period_start, period_end, actual_quantity, billable_quantity, currency, msp_cost_unit, msp_cost_extended)
       SELECT tenant_id, isv_id, 'cust-9', product_source_id, period_start, period_end, 1, 1, 'EUR', 1, 1 FROM isv_costs WHERE tenant_id = $1 AND product_source_id = 'backup'`,
    "DELETE FROM isv_costs WHERE tenant_id = $1 AND external_customer_ref = 'cust-9'",
      (r) => expect([r.unresolved.map((u) => u.external_customer_ref), r.currencies]).toEqual([['cust-9'], ['EUR', 'USD']])],
    ['a mapping removed', "DELETE FROM agreement_line_mappings WHERE tenant_id = $1 AND vendor_product_ref = 'backup'",
      `INSERT INTO agreement_line_mappings (tenant_id, isv_id, vendor_product_ref, status, connection_id, agreement_source_id, line_source_id, decided_by)
       SELECT $1, isv_id, 'backup', 'mapped', connection_id, 'A1', '10', 'isv' FROM identity_matches WHERE tenant_id = $1`,
      (r) => expect(r.unresolved.map((u) => u.reason)).toEqual(['product_unmapped'])],
  ];
  it.each(changes)('is no longer current after %s: the answer follows the change at once', async (_what, change, undo, expectChanged) => {
    const before = await service().reconcile(tenantId, period);
    await store();
    await q(change, [tenantId]);
    expect(await current()).toBe(false);
    const after = await service().reconcile(tenantId, period);
    expectChanged(after);
    // Stored again, the answer is the same.
    await store();
    expect(await current()).toBe(true);
    expect(await service().reconcile(tenantId, period)).toEqual(after);
    await q(undo, [tenantId]);
    expect(await current()).toBe(false);
    expect(await service().reconcile(tenantId, period)).toEqual(before);
  });
});
