/**
 * Billing over HTTP on the sandbox fixtures (docs/architecture.md, Agreements and billing): cost rows and partner minimums with
 * their replace semantics and rules, agreement-line mappings and suggestions, charges (approve on
 * ConnectWise once per key, 501 elsewhere, dismiss changes nothing) and the reconciliation, with the
 * expected figures worked out by hand from fixtures/sandbox-alpha (isv-billing.json, isv-book.json,
 * connectwise/additions.json, pax8/subscriptions.json).
 */
import fs from 'node:fs';
import path from 'node:path';
import { monthPeriod } from '../src/billing/sandbox-billing';
import { loadVendorFixtures } from '../src/sandbox/fixtures';
import { fixturesDir } from '../src/shared/project-root';
import { startTestService, type TestService } from './support/service';

let svc: TestService;
let cw: any;
let halo: any;
let isvId: string;
let keySeq = 0;
const newKey = () => `bkey-${Date.now()}-${keySeq++}`;
const A = (p: string) => `/tenants/${svc.alphaId}${p}`;
const B = (p: string) => `/tenants/${svc.betaId}${p}`;
const fixture = (p: string) => JSON.parse(fs.readFileSync(path.join(fixturesDir(), p), 'utf8'));
const additions: any[] = fixture('sandbox-alpha/connectwise/additions.json');
const qtyOf = (lineId: number) => additions.find((a) => a.id === lineId).quantity as number;
const cwState = () => JSON.stringify(['additions', 'agreements', 'catalog', 'companies', 'tickets'].map((r) => cw.list('sandbox-alpha', r)));
const current = monthPeriod(0);
const previous = monthPeriod(-1);

const msp = (p: string, init: { method?: string; json?: unknown } = {}) => svc.api(p, { ...init, key: svc.alphaMspKey });
const pending = async () => (await msp(A('/charges?status=pending'))).body.charges as any[];
const chargeOn = async (line: string) => (await pending()).find((c) => c.line_source_id === line);

function cost(over: Record<string, unknown> = {}) {
  return {
    external_customer_ref: 'cust-002', product_source_id: 'edr-endpoint', period_start: '2026-01-01', period_end: '2026-01-31',
    actual_quantity: 10, billable_quantity: 10, currency: 'USD', msp_cost_unit: 3.1, msp_cost_extended: 31, ...over,
  };
}

beforeAll(async () => {
  svc = await startTestService();
  cw = svc.services.simulators!.connectwise;
  halo = svc.services.simulators!.halopsa;
  isvId = (await svc.services.ds.query("SELECT id FROM isvs WHERE name = 'Sandbox ISV'"))[0].id;
}, 120_000);
afterAll(async () => { await svc?.close(); });

describe('charges and reconciliation on the sandbox fixtures', () => {
  it('lists the pending charges and the unresolved rows worked out from the fixture files', async () => {
    const res = await msp(A('/charges?status=pending'));
    expect(res.status).toBe(200);
    // Current month (the latest period) against the lines of additions.json:
    //   cust-001 (Contoso, agreement 101) edr-endpoint 48 on line 803 (46): charge 46 -> 48
    //   cust-002 (Northwind, 102) edr-endpoint 20 on line 809 (20): no charge
    //   cust-007 (Woodgrove, 104) edr-endpoint 118 on line 815 (120): charge 120 -> 118
    //   cust-001 m365-backup 40 on line 805 (40): none; cust-003 (Fabrikam, 103) m365-backup 70 on 814 (67): 67 -> 70
    //   cust-007 mfa-user 110 on 816 (110): none
    const got = res.body.charges.map((c: any) => [c.agreement_source_id, c.line_source_id, c.current_quantity, c.proposed_quantity, c.unit_price]).sort();
    expect(got).toEqual([
      ['101', '803', qtyOf(803), 48, 6.5],
      ['103', '814', qtyOf(814), 70, 3.5],
      ['104', '815', qtyOf(815), 118, 6.5],
    ]);
    expect([qtyOf(803), qtyOf(814), qtyOf(815)]).toEqual([46, 67, 120]);
    for (const c of res.body.charges) {
      expect(c).toMatchObject({ status: 'pending', connector: 'connectwise', period: { start: current.start, end: current.end } });
      expect(c.cost_rows).toHaveLength(1);
    }
    expect(res.body.charges.find((c: any) => c.line_source_id === '803')).toMatchObject({ company: { name: 'Contoso Ltd' }, product: { source_id: '6', name: 'SentinelOne Control EDR' } });
    // Unresolved, current month only (every previous-month row lands on a line):
    //   cust-001 helpdesk-seat: mapped to line 806, which ended 2026-09-30 -> agreement_inactive
    //   cust-003 siem-ingest: no mapping -> product_unmapped (awareness-training is unmapped on purpose: not listed)
    //   cust-004 (Lakeshore Family Dental: two PSA companies share the name) and cust-005 (no company) -> customer_unmatched
    const unresolved = res.body.unresolved.map((u: any) => [u.external_customer_ref, u.product_source_id, u.reason, u.period_start]).sort();
    expect(unresolved).toEqual([
      ['cust-001', 'helpdesk-seat', 'agreement_inactive', current.start],
      ['cust-003', 'siem-ingest', 'product_unmapped', current.start],
      ['cust-004', 'edr-endpoint', 'customer_unmatched', current.start],
      ['cust-005', 'm365-backup', 'customer_unmatched', current.start],
    ]);
  });

  it('reconciles the current month per company and product, with the figures worked out by hand', async () => {
    const res = await msp(A(`/billing/reconciliation?period_start=${current.start}&period_end=${current.end}`));
    expect(res.status).toBe(200);
    const r = res.body;
    expect(r).toMatchObject({ months: 1, currencies: ['USD'] });
    const row = (company: string, product: string | null) => r.reconciliation.find((x: any) => x.company.name === company && x.product.name === product);
    // Contoso, EDR (line 803: 46 x 6.50): ISV 48 x 3.10 = 148.80; revenue 46 x 6.5 = 299; margin 150.20.
    expect(row('Contoso Ltd', 'SentinelOne Control EDR')).toMatchObject({
      agreement_source_id: '101', line_source_ids: ['803'], isv_billable_quantity: 48, agreement_quantity: 46, unit_price: 6.5,
      subscription_quantity: null, isv_cost: 148.8, distributor_cost: 0, msp_cost: 148.8, revenue: 299, margin: 150.2,
      differences: ['isv_vs_agreement'], product: { isv_product_refs: ['edr-endpoint'] },
    });
    // Fabrikam, M365 backup (line 814: 67 x 3.50): ISV 70 x 1.20 = 84; revenue 234.50; margin 150.50.
    expect(row('Fabrikam Inc', 'Microsoft 365 Backup')).toMatchObject({ isv_billable_quantity: 70, agreement_quantity: 67, isv_cost: 84, revenue: 234.5, margin: 150.5, differences: ['isv_vs_agreement'] });
    // Woodgrove, Duo MFA (line 816: 110 x 4.50): ISV 110 x 2.50 = 275; revenue 495; margin 220; no difference.
    expect(row('Woodgrove Bank', 'Duo MFA (per user)')).toMatchObject({ isv_billable_quantity: 110, agreement_quantity: 110, isv_cost: 275, revenue: 495, margin: 220, differences: [] });
    // Northwind, awareness training: unmapped on purpose, billed on no agreement: cost 20 x 1 = 20, margin -20.
    expect(r.reconciliation.find((x: any) => x.company.name === 'Northwind Traders' && x.product.isv_product_refs.includes('awareness-training')))
      .toMatchObject({ isv_billable_quantity: 20, agreement_quantity: null, isv_cost: 20, revenue: 0, margin: -20, differences: ['not_billed'] });
    // Contoso, M365 Business Premium: line 804 bills 40 x 22 = 880; Pax8 holds 22 seats at the subscription's partner cost.
    const subs: any[] = fixture('sandbox-alpha/pax8/subscriptions.json');
    const contosoBp = subs.filter((s) => s.companyId === '072a6c2e-a6a2-57dd-98f7-c386f34aaddc' && s.productId === '1738a55a-8c98-589f-af47-05a5534edcc8' && s.status === 'Active');
    expect(contosoBp.map((s) => s.quantity)).toEqual([22]);
    const bpCost = Math.round(contosoBp[0].partnerCost * 22 * 100) / 100;
    expect(row('Contoso Ltd', 'Microsoft 365 Business Premium')).toMatchObject({
      agreement_quantity: 40, unit_price: 22, subscription_quantity: 22, revenue: 880, distributor_cost: bpCost, differences: ['subscription_vs_agreement'],
    });
    // Partner minimum on edr-endpoint, current month: 700 - (48 + 20 + 118 + 12) x 3.10 = 700 - 613.80 = 86.20.
    expect(r.partner_minimums).toEqual([expect.objectContaining({ product_source_id: 'edr-endpoint', minimum_amount: 700, reported_cost: 613.8, shortfall: 86.2 })]);
    expect(r.unresolved.map((u: any) => u.reason).sort()).toEqual(['agreement_inactive', 'customer_unmatched', 'customer_unmatched', 'product_unmapped']);
    // ISV cost landed: 148.80 + 62 (20 x 3.10) + 365.80 (118 x 3.10) + 48 (40 x 1.20) + 84 + 275 + 20 = 1003.60.
    // Unresolved: 40 x 30 + 500 x 0.50 + 12 x 3.10 + 25 x 1.20 = 1200 + 250 + 37.20 + 30 = 1517.20.
    // Revenue: every line of the active agreements 101-105 but 806 (ended): 3389 + 1405 + 1492.50 + 2205 + 557.50 = 9049.
    expect(r.totals).toMatchObject({ isv_cost: 1003.6, unresolved_isv_cost: 1517.2, partner_minimum_shortfall: 86.2, revenue: 9049 });
    expect(r.totals.margin).toBeCloseTo(r.totals.revenue - r.totals.msp_cost, 2);
    expect(r.totals.margin_after_minimums).toBeCloseTo(r.totals.margin - 86.2, 2);
  });

  it('the previous month has its own minimum shortfall and no unresolved rows', async () => {
    const r = (await msp(A(`/billing/reconciliation?period_start=${previous.start}&period_end=${previous.end}`))).body;
    // 700 - (46 + 20 + 118) x 3.10 = 700 - 570.40 = 129.60
    expect(r.partner_minimums).toEqual([expect.objectContaining({ reported_cost: 570.4, shortfall: 129.6 })]);
    expect(r.unresolved).toEqual([]);
  });

  it('the reconciliation is MSP-only (an ISV sees only its own charges, without prices), and refuses an impossible period', async () => {
    const own = (await svc.api(A('/charges?status=pending'))).body;
    expect(own.view).toBe('isv');
    expect(own.charges.map((c: any) => c.line_source_id).sort()).toEqual(['803', '814', '815']);
    for (const c of own.charges) expect(c).not.toHaveProperty('unit_price');
    expect(own.unresolved).toHaveLength(4);
    expect((await svc.api(A(`/billing/reconciliation?period_start=${current.start}&period_end=${current.end}`))).status).toBe(403);
    const bad = await msp(A('/billing/reconciliation?period_start=2026-02-30&period_end=2026-01-01'));
    expect(bad.status).toBe(422);
    expect(bad.body.code).toBe('validation');
  });
});

describe('approve and dismiss', () => {
  it('a preview shows the ConnectWise request and changes nothing; a commit sent twice at once rewrites the line once', async () => {
    const charge = await chargeOn('803');
    const before = cwState();
    const preview = await msp(A(`/charges/${charge.id}/approve`), { method: 'POST', json: {} });
    expect(preview.status).toBe(200);
    expect(preview.body.dry_run).toBe(true);
    expect(preview.body.preview.targets[0].requests[0]).toMatchObject({ method: 'PATCH', path: '/finance/agreements/101/additions/803' });
    expect(cwState()).toBe(before);
    expect((await chargeOn('803')).status).toBe('pending');

    const patches = () => cw.faults.countRequests('/finance/agreements/101/additions/803', 'PATCH');
    const sent = patches();
    const key = newKey();
    const [a, b] = await Promise.all([0, 1].map(() => msp(A(`/charges/${charge.id}/approve`), { method: 'POST', json: { dry_run: false, idempotency_key: key } })));
    const statuses = [a.status, b.status].sort();
    expect(statuses[0]).toBe(200);
    expect([200, 409]).toContain(statuses[1]);
    const ok = [a, b].find((x) => x.status === 200)!;
    expect(ok.body).toMatchObject({ dry_run: false, line_source_id: '803', quantity: 48, charge: { status: 'approved' } });
    const again = await msp(A(`/charges/${charge.id}/approve`), { method: 'POST', json: { dry_run: false, idempotency_key: key } });
    expect(again.body).toMatchObject({ idempotent_replay: true, quantity: 48 });
    expect(patches() - sent).toBe(1);
    expect(cw.list('sandbox-alpha', 'additions').find((x: any) => x.id === 803).quantity).toBe(48);
    // The line now bills what is reported: no pending charge on it, and the approval is listed.
    expect(await chargeOn('803')).toBeUndefined();
    const approved = (await msp(A('/charges?status=approved'))).body.charges;
    expect(approved.map((c: any) => c.id)).toContain(charge.id);
    // Another key cannot approve it again.
    const other = await msp(A(`/charges/${charge.id}/approve`), { method: 'POST', json: { dry_run: false, idempotency_key: newKey() } });
    expect(other.status).toBe(422);
    expect(other.body.code).toBe('request_invalid');
  });

  it('dismiss leaves the PSA byte-identical and the same proposal does not come back', async () => {
    const charge = await chargeOn('815');
    const before = cwState();
    // A preview (the default) changes nothing; a commit needs its key.
    const preview = await msp(A(`/charges/${charge.id}/dismiss`), { method: 'POST', json: {} });
    expect(preview.body).toMatchObject({ dry_run: true, changed: true, charge: { status: 'pending' } });
    expect(await chargeOn('815')).toBeDefined();
    expect((await msp(A(`/charges/${charge.id}/dismiss`), { method: 'POST', json: { dry_run: false } })).status).toBe(422);
    const res = await msp(A(`/charges/${charge.id}/dismiss`), { method: 'POST', json: { dry_run: false, idempotency_key: newKey() } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ dry_run: false, changed: true, charge: { status: 'dismissed' } });
    expect(cwState()).toBe(before);
    expect(await chargeOn('815')).toBeUndefined();
    // A sync and an unrelated submission recompute the charges: still dismissed, not raised again.
    await svc.api(A('/sync'), { method: 'POST', json: {} });
    await svc.api(A('/billing/costs'), { method: 'POST', json: cost({ dry_run: false }) });
    expect(await chargeOn('815')).toBeUndefined();
    expect((await msp(A(`/charges/${charge.id}/dismiss`), { method: 'POST', json: {} })).body.changed).toBe(false);
    expect(cwState()).toBe(before);
    // A different billable quantity is a new proposal.
    await svc.api(A('/billing/costs'), { method: 'POST', json: cost({ external_customer_ref: 'cust-007', period_start: current.start, period_end: current.end, actual_quantity: 119, billable_quantity: 119, msp_cost_extended: 368.9, dry_run: false }) });
    expect(await chargeOn('815')).toMatchObject({ current_quantity: 120, proposed_quantity: 119 });
  });

  it('approve is an MSP operation, and answers 501 on the limited connector', async () => {
    const betaCharges = (await svc.api(B('/charges?status=pending'), { key: svc.betaMspKey })).body.charges;
    expect(betaCharges.map((c: any) => [c.agreement_source_id, c.line_source_id, c.current_quantity, c.proposed_quantity])).toEqual([['32', '7008', 6, 8]]);
    const before = JSON.stringify(halo.list('sandbox-beta', 'recurring_invoices'));
    for (const json of [{}, { dry_run: false, idempotency_key: newKey() }]) {
      const res = await svc.api(B(`/charges/${betaCharges[0].id}/approve`), { method: 'POST', json, key: svc.betaMspKey });
      expect(res.status).toBe(501);
      expect(res.body.code).toBe('not_supported');
    }
    expect(JSON.stringify(halo.list('sandbox-beta', 'recurring_invoices'))).toBe(before);
    const isv = await svc.api(B(`/charges/${betaCharges[0].id}/approve`), { method: 'POST', json: {} });
    expect(isv.status).toBe(403);
    expect(isv.body.code).toBe('role_required');
    expect((await msp(A('/charges/not-a-charge/approve'), { method: 'POST', json: {} })).status).toBe(404);
    expect((await msp(A(`/charges/${betaCharges[0].id}/dismiss`), { method: 'POST', json: {} })).status).toBe(404);
  });
});

describe('approve on Autotask', () => {
  it('answers 501 and leaves Autotask unchanged: only ConnectWise takes an approval', async () => {
    const at = svc.services.simulators!.autotask as any;
    const fixtures = loadVendorFixtures('autotask-demo', 'autotask');
    at.seed('autotask-demo', fixtures.resources);
    const t = (await svc.graphql('mutation { create_tenant(name: "Autotask Billing MSP", slug: "autotask-billing") { id } }')).data.create_tenant.id;
    const c = await svc.graphql('mutation($input: CreateConnectionInput!) { create_connection(input: $input) { id } }', {
      input: { tenant_id: t, kind: 'psa', connector: 'autotask', base_url: `${svc.url}/sandbox-vendors/autotask/atservicesrest/v1.0`,
        credentials: { username: 'sandbox', secret: 'sandbox-secret', integrationCode: 'SANDBOX' },
        status_mapping: Object.entries(fixtures.statusMapping).map(([vendor_status, canonical]) => ({ vendor_status, canonical })) },
    });
    await svc.graphql('mutation($i: ID!, $c: ID!) { set_grant(isv_id: $i, connection_id: $c, keys: ["billing.cost.submit"]) { id } }', { i: isvId, c: c.data.create_connection.id });
    const mspKey = (await svc.graphql('mutation($t: ID!) { issue_msp_key(tenant_id: $t) { key } }', { t })).data.issue_msp_key.key;
    const T = (p: string) => `/tenants/${t}${p}`;
    expect((await svc.api(T('/sync'), { method: 'POST', json: {} })).body.ok).toBe(true);
    // Harbor Logistics LLC (company 3) has contract 29684002 with service 29684506 (Contracts.json, ContractServices.json).
    expect((await svc.api(T('/identity/book'), { method: 'PUT', json: { customers: [{ ref: 'harbor', name: 'Harbor Logistics' }] } })).body.matched).toBe(1);
    expect((await svc.api(T('/agreement-line-mappings'), { method: 'POST', json: { vendor_key: isvId, vendor_product_ref: 'edr-endpoint', status: 'mapped', agreement_id: '29684002', agreement_line_ref: '29684506' } })).status).toBe(201);
    expect((await svc.api(T('/billing/costs'), { method: 'POST', json: cost({ external_customer_ref: 'harbor', billable_quantity: 999, actual_quantity: 999, msp_cost_extended: 3096.9, dry_run: false }) })).status).toBe(201);
    const charges = (await svc.api(T('/charges'), { key: mspKey })).body.charges;
    expect(charges.map((x: any) => [x.connector, x.line_source_id, x.proposed_quantity])).toEqual([['autotask', '29684506', 999]]);
    const state = () => JSON.stringify(['ContractServices', 'ContractServiceUnits', 'ContractServiceAdjustments'].map((r) => at.list('autotask-demo', r)));
    const before = state();
    for (const json of [{}, { dry_run: false, idempotency_key: newKey() }]) {
      const res = await svc.api(T(`/charges/${charges[0].id}/approve`), { method: 'POST', json, key: mspKey });
      expect([res.status, res.body.code]).toEqual([501, 'not_supported']);
    }
    expect(state()).toBe(before);
    expect((await svc.api(T('/charges?status=pending'), { key: mspKey })).body.charges).toHaveLength(1);
  });
});

describe('cost rows and partner minimums', () => {
  const totals = async (q = '') => (await svc.api(A(`/billing/costs?period_start=2025-03-01&period_end=2025-03-31${q}`))).body.totals;

  it('a preview stores nothing; a replay and a resubmission replace the row, and totals do not change', async () => {
    const row = cost({ period_start: '2025-03-01', period_end: '2025-03-31' });
    const preview = await svc.api(A('/billing/costs'), { method: 'POST', json: row });
    expect(preview.status).toBe(200);
    expect(preview.body).toMatchObject({ dry_run: true, replaced: false, cost: { id: null, billable_quantity: 10 } });
    expect((await totals()).billable_quantity).toBe(0);

    const key = newKey();
    const first = await svc.api(A('/billing/costs'), { method: 'POST', json: { ...row, dry_run: false, idempotency_key: key } });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ dry_run: false, replaced: false, cost: { revision: 1, msp_cost_extended: 31 } });
    const replay = await svc.api(A('/billing/costs'), { method: 'POST', json: { ...row, dry_run: false, idempotency_key: key } });
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({ replaced: true, replaces_id: first.body.cost.id, cost: { id: first.body.cost.id, revision: 2 } });
    // The same customer, product and period without a key: the same row again.
    const again = await svc.api(A('/billing/costs'), { method: 'POST', json: { ...row, billable_quantity: 12, msp_cost_extended: 37.2, dry_run: false } });
    expect(again.body).toMatchObject({ replaced: true, cost: { id: first.body.cost.id, billable_quantity: 12, revision: 3 } });
    expect(await totals()).toEqual({ billable_quantity: 12, msp_cost_extended: 37.2 });
    // The key's replay after a correction under another identity moves that one row.
    const moved = await svc.api(A('/billing/costs'), { method: 'POST', json: { ...row, external_customer_ref: 'cust-003', dry_run: false, idempotency_key: key } });
    expect(moved.body).toMatchObject({ replaced: true, cost: { id: first.body.cost.id, external_customer_ref: 'cust-003' } });
    expect(await totals()).toEqual({ billable_quantity: 10, msp_cost_extended: 31 });
    // A different period adds a row.
    const other = await svc.api(A('/billing/costs'), { method: 'POST', json: { ...row, period_start: '2025-04-01', period_end: '2025-04-30', dry_run: false } });
    expect(other.status).toBe(201);
    const listed = (await svc.api(A('/billing/costs?period_start=2025-03-01&period_end=2025-04-30'))).body;
    expect(listed.costs).toHaveLength(2);
    expect(listed.totals.billable_quantity).toBe(20);
    expect((await svc.api(A('/billing/costs?customer=cust-003&period_start=2025-03-01&period_end=2025-04-30'))).body.costs).toHaveLength(1);
  });

  it('refuses every value rule of a cost row and a partner minimum with 422 validation and writes nothing', async () => {
    const count = async () => Number((await svc.services.ds.query('SELECT count(*)::int AS n FROM isv_costs'))[0].n);
    const before = await count();
    const cases: [Record<string, unknown>, string][] = [
      [{ period_end: '2025-12-31', period_start: '2026-01-01' }, 'period_end'],
      [{ period_start: '2026-02-30' }, 'period_start'],
      [{ period_start: '26-01-01' }, 'period_start'],
      [{ actual_quantity: -1 }, 'actual_quantity'],
      [{ billable_quantity: -0.5, msp_cost_extended: -1.55 }, 'billable_quantity'],
      [{ msp_cost_unit: -3.1, msp_cost_extended: -31 }, 'msp_cost_unit'],
      [{ currency: 'ABC' }, 'currency'],
      [{ currency: 'dollars' }, 'currency'],
      [{ msp_cost_extended: 31.02 }, 'msp_cost_extended'],
      [{ customer_price_unit: 5, customer_price_extended: 49 }, 'customer_price_extended'],
    ];
    for (const [over, field] of cases) {
      for (const dry_run of [true, false]) {
        const res = await svc.api(A('/billing/costs'), { method: 'POST', json: cost({ ...over, dry_run, idempotency_key: newKey() }) });
        expect([res.status, res.body.code, field]).toEqual([422, 'validation', field]);
        expect(res.body.details.problems.map((p: any) => p.field)).toContain(field);
      }
    }
    // 1e999 parses as Infinity: a request-schema or rule refusal, never a 500.
    const huge = await svc.api(A('/billing/costs'), { method: 'POST', body: JSON.stringify(cost({ dry_run: false })).replace('"actual_quantity":10', '"actual_quantity":1e999'), headers: { 'content-type': 'application/json' } });
    expect(huge.status).toBe(422);
    // Within a cent is fine: 0.1 x 3 = 0.30000000000000004.
    expect((await svc.api(A('/billing/costs'), { method: 'POST', json: cost({ billable_quantity: 3, actual_quantity: 3, msp_cost_unit: 0.1, msp_cost_extended: 0.3 }) })).status).toBe(200);
    // Text the store cannot hold, in a body field or a filter: 422, never 500.
    for (const bad of ['cust\u0000001', 'cust\ud800']) {
      expect((await svc.api(A('/billing/costs'), { method: 'POST', json: cost({ external_customer_ref: bad }) })).status).toBe(422);
    }
    expect((await msp(A('/billing/costs?isv_id=%00'))).status).toBe(422);
    expect((await msp(A('/agreement-line-mappings?isv_id=x%00'))).status).toBe(422);
    expect(await count()).toBe(before);
  });

  it('partner minimums replace the same way, and need the grant and an ISV key', async () => {
    const body = { product_source_id: 'edr-endpoint', period_start: '2025-03-01', period_end: '2025-03-31', currency: 'usd', minimum_amount: 500, dry_run: false };
    const first = await svc.api(A('/billing/partner-minimums'), { method: 'POST', json: body });
    expect(first.status).toBe(201);
    expect(first.body.minimum).toMatchObject({ currency: 'USD', minimum_amount: 500 });
    const second = await svc.api(A('/billing/partner-minimums'), { method: 'POST', json: { ...body, minimum_amount: 650 } });
    expect(second.body).toMatchObject({ replaced: true, minimum: { id: first.body.minimum.id, minimum_amount: 650, revision: 2 } });
    const list = (await svc.api(A('/billing/partner-minimums?period_start=2025-03-01&period_end=2025-03-31'))).body.partner_minimums;
    expect(list.map((m: any) => m.minimum_amount)).toEqual([650]);
    expect((await svc.api(A('/billing/partner-minimums'), { method: 'POST', json: { ...body, minimum_amount: -1 } })).status).toBe(422);
    const asMsp = await msp(A('/billing/partner-minimums'), { method: 'POST', json: body });
    expect(asMsp.body.code).toBe('role_required');
    // The MSP reads every ISV's rows.
    expect((await msp(A('/billing/partner-minimums?period_start=2025-03-01&period_end=2025-03-31'))).body.partner_minimums).toHaveLength(1);
  });
});

describe('agreement-line mappings', () => {
  const mappings = () => svc.api(A('/agreement-line-mappings'));

  it('maps a product to a line of an active agreement once, and refuses what cannot be mapped', async () => {
    const body = { vendor_key: isvId, vendor_product_ref: 'edr-endpoint', status: 'mapped', agreement_id: '105', agreement_line_ref: '821' };
    const created = await svc.api(A('/agreement-line-mappings'), { method: 'POST', json: body });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ status: 'mapped', agreement_id: '105', agreement_line_ref: '821', company_name: 'Litware Inc', psa_vendor: 'connectwise', already_existed: false });
    const again = await svc.api(A('/agreement-line-mappings'), { method: 'POST', json: body });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id: created.body.id, already_existed: true });

    const count = async () => (await mappings()).body.agreement_line_mappings.length;
    const before = await count();
    const refused: [Record<string, unknown>, number, string][] = [
      [{ agreement_id: '106', agreement_line_ref: '822' }, 422, 'validation'], // cancelled agreement
      [{ agreement_id: '999' }, 422, 'validation'],
      [{ agreement_line_ref: '803' }, 422, 'validation'], // a line of agreement 101
      [{ agreement_line_ref: 'nope' }, 422, 'validation'],
      [{ vendor_key: '00000000-0000-0000-0000-000000000000' }, 422, 'validation'],
      [{ psa_vendor: 'autotask' }, 422, 'validation'],
      [{ agreement_line_ref: null }, 422, 'request_invalid'],
    ];
    for (const [over, status, code] of refused) {
      const res = await svc.api(A('/agreement-line-mappings'), { method: 'POST', json: { ...body, ...over } });
      expect([res.status, over]).toEqual([status, over]);
      if (code !== 'request_invalid') expect(res.body.code).toBe(code);
    }
    // `unmapped` while the product is mapped: delete the pairings first.
    const unmapped = await svc.api(A('/agreement-line-mappings'), { method: 'POST', json: { vendor_key: isvId, vendor_product_ref: 'edr-endpoint', status: 'unmapped' } });
    expect([unmapped.status, unmapped.body.code]).toEqual([422, 'request_invalid']);
    expect(await count()).toBe(before);
    // The MSP may not create one (an ISV maps its own products), but reads them all and may delete.
    expect((await msp(A('/agreement-line-mappings'), { method: 'POST', json: body })).body.code).toBe('role_required');
    // dry_run=true answers what it would delete and deletes nothing.
    const dry = await msp(A(`/agreement-line-mappings/${created.body.id}?dry_run=true`), { method: 'DELETE' });
    expect(dry.body).toEqual({ id: created.body.id, deleted: false, dry_run: true });
    expect(await count()).toBe(before);
    const del = await msp(A(`/agreement-line-mappings/${created.body.id}`), { method: 'DELETE' });
    expect(del.body).toEqual({ id: created.body.id, deleted: true, dry_run: false });
    expect((await svc.api(A(`/agreement-line-mappings/${created.body.id}`), { method: 'DELETE' })).status).toBe(404);
  });

  it('a new mapping and a new identity match recompute the charges', async () => {
    // siem-ingest of cust-003 (Fabrikam, agreement 103) is unmapped: pair it with line 813 (12 units).
    const created = await svc.api(A('/agreement-line-mappings'), { method: 'POST', json: { vendor_key: isvId, vendor_product_ref: 'siem-ingest', status: 'mapped', agreement_id: '103', agreement_line_ref: '813' } });
    expect(created.status).toBe(201);
    expect(await chargeOn('813')).toMatchObject({ current_quantity: 12, proposed_quantity: 500 });
    await svc.api(A(`/agreement-line-mappings/${created.body.id}`), { method: 'DELETE' });
    expect(await chargeOn('813')).toBeUndefined();
    const unresolved = async () => (await msp(A('/charges'))).body.unresolved.find((u: any) => u.external_customer_ref === 'cust-004');
    expect((await unresolved()).reason).toBe('customer_unmatched');
    // 19303: one of the two Lakeshore Family Dental companies of connectwise/companies.json, with no agreement.
    const m = await svc.api(A('/identity/match'), { method: 'POST', json: { customer_ref: 'cust-004', company_source_id: '19303' } });
    expect(m.status).toBe(200);
    expect((await unresolved()).reason).toBe('product_unmapped');
    await svc.api(A('/identity/unset'), { method: 'POST', json: { customer_ref: 'cust-004' } });
    expect((await unresolved()).reason).toBe('customer_unmatched');
  });

  it('suggests ranked lines with reasons and never maps', async () => {
    const before = JSON.stringify((await mappings()).body.agreement_line_mappings);
    const res = await svc.api(A('/agreement-line-mappings/suggest'), { method: 'POST', json: { vendor_key: isvId, vendor_product_ref: 'edr-endpoint', product_name: 'SentinelOne Control EDR', product_sku: 'EDR-S1' } });
    expect(res.status).toBe(200);
    expect(res.body.mapped).toBe(false);
    const top = res.body.candidates.slice(0, 4);
    // EDR-S1 lines of active agreements: 803 (101), 809 (102), 815 (104); the three whose customers report it rank first.
    expect(top.slice(0, 3).map((c: any) => c.agreement_line_ref).sort()).toEqual(['803', '809', '815']);
    expect(top[0].reasons).toEqual(['same_sku', 'same_product_name', 'customer_reports_product']);
    expect(top[0].score).toBe(1);
    expect(res.body.candidates.every((c: any) => c.agreement_id !== '106')).toBe(true);
    expect(res.body.candidates.find((c: any) => c.agreement_line_ref === '803').already_mapped).toBe(true);
    const byCustomer = await svc.api(A('/agreement-line-mappings/suggest'), { method: 'POST', json: { vendor_key: isvId, vendor_product_ref: 'edr-endpoint', product_sku: 'EDR-S1', external_customer_ref: 'cust-002' } });
    expect(byCustomer.body.candidates.map((c: any) => c.agreement_line_ref)).toEqual(['809']);
    expect(JSON.stringify((await mappings()).body.agreement_line_mappings)).toBe(before);
  });
});
