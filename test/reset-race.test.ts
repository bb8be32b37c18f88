/**
 * A sandbox reset racing cost-row commits on the same tenant (docs/architecture.md, Faults an operator
 * will meet): on PostgreSQL their transactions deadlocked (1 round in 3) and the victim answered 500.
 * The victim now runs again (src/db/transient.ts): no answer of either is a 500.
 */
import { uniqueSuffix } from './support/runtime';
import { startTestService, type TestService } from './support/service';

let svc: TestService;
beforeAll(async () => { svc = await startTestService(); }, 120_000);
afterAll(async () => { await svc?.close(); });

function cost(customer: string, key: string) {
  return {
    external_customer_ref: customer, product_source_id: 'edr-endpoint', period_start: '2026-01-01', period_end: '2026-01-31',
    actual_quantity: 10, billable_quantity: 10, currency: 'USD', msp_cost_unit: 3.1, msp_cost_extended: 31, dry_run: false, idempotency_key: key,
  };
}

it('resets racing cost commits never answer 500', async () => {
  const statuses: number[] = [];
  for (let round = 0; round < 3; round++) {
    const commits = Array.from({ length: 8 }, (_, i) => svc.api(`/tenants/${svc.alphaId}/billing/costs`, {
      method: 'POST', json: cost(['cust-001', 'cust-002', 'cust-003'][i % 3], `race-${round}-${i}-${uniqueSuffix()}`),
    }));
    const reset = svc.api('/sandbox/reset', { method: 'POST', json: { tenant_id: svc.alphaId } });
    for (const r of await Promise.all([reset, ...commits])) statuses.push(r.status);
  }
  expect(statuses.filter((s) => s >= 500)).toEqual([]);
  expect(statuses.filter((s) => s === 201 || s === 200).length).toBeGreaterThan(0);
}, 180_000);
