/**
 * Single-record reads (docs/architecture.md, Reads): every list has GET /tenants/<t>/<list>/<id>, by our id or by
 * the vendor's source_id, answering the record exactly as the list shows it; a record of another tenant
 * is 404 there, as is an id that names nothing.
 */
import { allOperations } from '../src/features';
import { startTestService, type TestService } from './support/service';

let svc: TestService;
beforeAll(async () => { svc = await startTestService(); }, 120_000);
afterAll(async () => { await svc?.close(); });

const reads = () => allOperations().filter((o) => o.name.startsWith('get_') && o.http?.path.endsWith('/{record_id}'));
const first = async (path: string) => {
  const res = await svc.api(`${path}?limit=1`);
  return res.status === 200 ? (Object.values(res.body).find(Array.isArray) as any[])[0] : undefined;
};

it('every list has a single-record read that answers the record as the list shows it', async () => {
  expect(reads().map((o) => o.http!.path.split('/')[3]).sort()).toEqual([
    'agreements', 'applications', 'contacts', 'devices', 'incidents', 'members', 'packages', 'products', 'projects',
    'subscriptions', 'ticket-boards', 'ticket-priorities', 'ticket-statuses', 'tickets',
  ]);
  let read = 0;
  for (const op of reads()) {
    const list = op.http!.path.replace('/{record_id}', '').replace('{tenant_id}', svc.alphaId);
    const item = await first(list);
    expect([op.name, Boolean(item)]).toEqual([op.name, true]);
    for (const id of [item.id, item.source_id].filter(Boolean)) {
      const res = await svc.api(`${list}/${encodeURIComponent(id)}`);
      expect([op.name, res.status]).toEqual([op.name, 200]);
      expect(res.body).toEqual(item);
      read++;
    }
  }
  expect(read).toBeGreaterThanOrEqual(14);
});

it("another tenant's record, an unknown id and a malformed one are 404", async () => {
  const betaTicket = await first(`/tenants/${svc.betaId}/tickets`);
  for (const id of [betaTicket.id, '00000000-0000-4000-8000-000000000000', 'no such ticket', '%00']) {
    const res = await svc.api(`/tenants/${svc.alphaId}/tickets/${encodeURIComponent(id)}`);
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('not_found');
  }
  // Beta's own key reads it on beta.
  expect((await svc.api(`/tenants/${svc.betaId}/tickets/${betaTicket.id}`)).body.id).toBe(betaTicket.id);
});

it('a single read follows its list: 501 where the limited connector has no such list', async () => {
  const res = await svc.api(`/tenants/${svc.betaId}/members/1`);
  expect(res.status).toBe(501);
  expect(res.body.code).toBe('not_supported');
});
