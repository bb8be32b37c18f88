/**
 * What an ISV sees of its own usage (docs/architecture.md, Agreements and billing): each cost row's
 * resolution in the submit answer and in GET billing/costs (landed on a line, or the reason and what
 * fixes it), and the charges its own rows raised, without the MSP's price or another ISV's figures.
 * On the sandbox fixtures: cust-005 (Zephyr Analytics) has no PSA company; Northwind Traders (19292)
 * has agreement 102, whose line 809 (quantity 20) bills edr-endpoint.
 */
import { monthPeriod } from '../src/billing/sandbox-billing';
import { Grant } from '../src/access/caller';
import { startTestService, type TestService } from './support/service';

let svc: TestService;
let isvId: string;
const A = (p: string) => `/tenants/${svc.alphaId}${p}`;
const current = monthPeriod(0);
const msp = (p: string, init: { method?: string; json?: unknown } = {}) => svc.api(p, { ...init, key: svc.alphaMspKey });

const edrRow = (customer: string, quantity: number) => ({
  external_customer_ref: customer, product_source_id: 'edr-endpoint', period_start: current.start, period_end: current.end,
  actual_quantity: quantity, billable_quantity: quantity, currency: 'USD', msp_cost_unit: 3.1, msp_cost_extended: Math.round(quantity * 310) / 100,
});

beforeAll(async () => {
  svc = await startTestService();
  isvId = (await svc.services.ds.query("SELECT id FROM isvs WHERE name = 'Sandbox ISV'"))[0].id;
}, 120_000);
afterAll(async () => { await svc?.close(); });

describe('an ISV follows its cost rows', () => {
  let rowId: string;
  let chargeId: string;

  it('submits a row for a customer the MSP has not matched and reads the reason and the fix, in the answer and in the list', async () => {
    const preview = await svc.api(A('/billing/costs'), { method: 'POST', json: { ...edrRow('cust-005', 30) } });
    expect(preview.status).toBe(200);
    expect(preview.body.cost.resolution).toMatchObject({ status: 'customer_unmatched', line_source_id: null, charge: null });

    const committed = await svc.api(A('/billing/costs'), { method: 'POST', json: { ...edrRow('cust-005', 30), dry_run: false } });
    expect(committed.status).toBe(201);
    // No idempotency_key: the row is identified by customer, product and period, and says so.
    expect(committed.body).toMatchObject({ dry_run: false, replaced: false, identified_by: 'customer_product_period' });
    expect(committed.body.cost.resolution).toMatchObject({ status: 'customer_unmatched', company_source_id: null, agreement_source_id: null, line_source_id: null, charge: null });
    expect(committed.body.cost.resolution.fix).toMatch(/identity\/match/);
    rowId = committed.body.cost.id;

    const listed = await svc.api(A('/billing/costs?customer=cust-005&product=edr-endpoint'));
    expect(listed.status).toBe(200);
    expect(listed.body.costs).toHaveLength(1);
    expect(listed.body.costs[0]).toMatchObject({ id: rowId, resolution: { status: 'customer_unmatched' } });

    // The same row again (a replay without a key) replaces it: one row, never two.
    const again = await svc.api(A('/billing/costs'), { method: 'POST', json: { ...edrRow('cust-005', 30), dry_run: false } });
    expect(again.body).toMatchObject({ replaced: true, replaces_id: rowId, identified_by: 'customer_product_period' });
    expect((await svc.api(A('/billing/costs?customer=cust-005&product=edr-endpoint'))).body.costs).toHaveLength(1);

    // The other reasons read the same way: a product paired with nothing.
    const siem = (await svc.api(A('/billing/costs?customer=cust-003&product=siem-ingest'))).body.costs[0];
    expect(siem.resolution).toMatchObject({ status: 'product_unmapped', company_source_id: '19293' });
    expect(siem.resolution.fix).toMatch(/agreement-line-mappings/);
  });

  it('after the MSP matches the customer, the row has landed on the line and the ISV reads its charge', async () => {
    // Zephyr Analytics turns out to be the company the PSA knows as Northwind Traders: the MSP moves the match.
    expect((await msp(A('/identity/unset'), { method: 'POST', json: { customer_ref: 'cust-002', isv_id: isvId } })).status).toBe(200);
    expect((await msp(A('/identity/match'), { method: 'POST', json: { customer_ref: 'cust-005', company_source_id: '19292', isv_id: isvId } })).status).toBeLessThan(300);

    const row = (await svc.api(A('/billing/costs?customer=cust-005&product=edr-endpoint'))).body.costs[0];
    expect(row.resolution).toMatchObject({
      status: 'landed', company_source_id: '19292', agreement_source_id: '102', line_source_id: '809', fix: null,
      charge: { status: 'pending', current_quantity: 20, proposed_quantity: 30 },
    });
    chargeId = row.resolution.charge.id;

    const mine = await svc.api(A('/charges'));
    expect(mine.status).toBe(200);
    const charge = mine.body.charges.find((c: any) => c.id === chargeId);
    expect(charge).toMatchObject({ agreement_source_id: '102', line_source_id: '809', current_quantity: 20, proposed_quantity: 30, your_quantity: 30, cost_rows: [rowId], status: 'pending' });
    // The MSP's price to its customer is not the ISV's to see.
    expect(charge).not.toHaveProperty('unit_price');
    const asMsp = (await msp(A('/charges'))).body.charges.find((c: any) => c.id === chargeId);
    expect(asMsp).toMatchObject({ unit_price: expect.any(Number), proposed_quantity: 30 });
  });

  it('never shows an ISV another ISV\'s rows or figures on a line they share', async () => {
    const other = (await svc.graphql('mutation($n: String!) { create_isv(name: $n) { id } }', { n: 'Second billing ISV' })).data.create_isv.id as string;
    const key = (await svc.graphql('mutation($id: ID!) { issue_api_key(isv_id: $id, label: "billing") { key } }', { id: other })).data.issue_api_key.key as string;
    const psa = (await svc.api(A('/connections'))).body.connections.find((c: any) => c.kind === 'psa');
    await svc.graphql('mutation($isv: ID!, $c: ID!, $k: [String!]!) { set_grant(isv_id: $isv, connection_id: $c, keys: $k) { id } }', { isv: other, c: psa.id, k: [Grant.CostSubmit] });
    const as = (p: string, init: { method?: string; json?: unknown } = {}) => svc.api(p, { ...init, key });
    expect((await as(A('/identity/book'), { method: 'PUT', json: { customers: [{ ref: 'nw-1', name: 'Northwind Traders' }] } })).status).toBe(200);
    expect((await as(A('/agreement-line-mappings'), { method: 'POST', json: { vendor_key: other, vendor_product_ref: 'edr-endpoint', status: 'mapped', agreement_id: '102', agreement_line_ref: '809' } })).status).toBe(201);
    // The key in the Idempotency-Key header identifies the row as one in the body would.
    const submitted = await svc.api(A('/billing/costs'), { method: 'POST', key, headers: { 'idempotency-key': 'nw-1-edr' }, json: { ...edrRow('nw-1', 5), dry_run: false } });
    expect(submitted.status).toBe(201);
    expect(submitted.body).toMatchObject({ identified_by: 'idempotency_key', cost: { resolution: { status: 'landed', line_source_id: '809' } } });
    const otherRow = submitted.body.cost.id;
    expect(submitted.body.cost.idempotency_key).toBe('nw-1-edr');

    const total = (await msp(A('/charges'))).body.charges.find((c: any) => c.line_source_id === '809' && c.status === 'pending');
    expect(total).toMatchObject({ proposed_quantity: 35 });
    expect([...total.cost_rows].sort()).toEqual([rowId, otherRow].sort());

    const sandboxView = (await svc.api(A('/charges'))).body.charges.find((c: any) => c.id === total.id);
    expect(sandboxView).toMatchObject({ your_quantity: 30, cost_rows: [rowId], proposed_quantity: null });
    const otherView = await as(A('/charges'));
    expect(otherView.body.charges).toEqual([expect.objectContaining({ id: total.id, your_quantity: 5, cost_rows: [otherRow], proposed_quantity: null })]);
    expect(otherView.body.unresolved).toEqual([]);
    // The row's own resolution hides the shared total too.
    expect((await svc.api(A('/billing/costs?customer=cust-005&product=edr-endpoint'))).body.costs[0].resolution.charge).toMatchObject({ id: total.id, proposed_quantity: null });
  });
});
