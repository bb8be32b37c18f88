/**
 * The record writer against the store (src/sync/record-writer.ts): how a fetched page stands against
 * what is stored (compareStored: a touch, where only bookkeeping keys moved, from an edit), and the page's
 * write that follows, which takes the stored payloads compareStored read instead of reading them again,
 * and still sees a payload that moved in the store between the two.
 */
import { RecordWriter } from '../src/sync/record-writer';
import { mapTicket, vendorUpdatedAt } from '../src/connectors/connectwise/mappers';
import type { FetchedRecord } from '../src/connectors/types';
import type { ConnectWiseSimulator } from '../src/simulators/connectwise/simulator';
import { startTestService, type TestService } from './support/service';

let svc: TestService;
let scope: { tenantId: string; connectionId: string };
beforeAll(async () => {
  svc = await startTestService();
  const [conn] = await svc.services.ds.query(`SELECT id FROM connections WHERE tenant_id = $1 AND connector = 'connectwise'`, [svc.alphaId]);
  scope = { tenantId: svc.alphaId, connectionId: conn.id };
}, 120_000);
afterAll(async () => { await svc?.close(); });

const BOOKKEEPING = ['_info'];

async function stored(limit: number): Promise<{ source_id: string; raw: Record<string, any> }[]> {
  return svc.services.ds.query(
    'SELECT source_id, raw FROM tickets WHERE tenant_id = $1 AND connection_id = $2 ORDER BY source_id LIMIT $3', [scope.tenantId, scope.connectionId, limit]);
}
function fetched(native: Record<string, any>): FetchedRecord<'tickets'> {
  return { sourceId: String(native.id), native, vendorUpdatedAt: vendorUpdatedAt(native), fields: mapTicket(native, {}) };
}
const bumped = (raw: Record<string, any>) => ({ ...raw, _info: { ...raw._info, lastUpdated: '2031-01-02T03:04:05Z' } });

describe('compareStored', () => {
  it('tells a record stored as fetched, one only its bookkeeping moved on, one edited and one not stored apart', async () => {
    const [same, touched, edited] = await stored(3);
    // As the vendor answers it (the stored copy comes back from jsonb with its keys reordered, another hash).
    const cw = svc.services.simulators!.connectwise as ConnectWiseSimulator;
    const page = [
      fetched(JSON.parse(JSON.stringify(cw.get('sandbox-alpha', 'tickets', Number(same.source_id))))),
      fetched(bumped(touched.raw)),
      fetched({ ...bumped(edited.raw), summary: `${edited.raw.summary} (edited)` }),
      fetched({ ...same.raw, id: 987654321 }),
    ];
    const out = await new RecordWriter(svc.services.ds).compareStored('tickets', scope, page, BOOKKEEPING, new Date());
    expect([...out.settled, ...out.unsettled]).toEqual([same.source_id]);
    expect([...out.touched]).toEqual([touched.source_id]);
    expect([...out.edited]).toEqual([edited.source_id]);
    // A key that is bookkeeping for another vendor is not for this one: moved alone, it is an edit.
    const other = await new RecordWriter(svc.services.ds).compareStored('tickets', scope, [fetched(bumped(touched.raw))], [], new Date());
    expect([...other.edited]).toEqual([touched.source_id]);
  });
});

describe('a page written after its compare', () => {
  it('carries each updated record with the payload stored before it, read once', async () => {
    const [a, b] = await stored(2);
    const writer = new RecordWriter(svc.services.ds);
    const page = [fetched({ ...a.raw, summary: `${a.raw.summary} (one)` }), fetched({ ...b.raw, summary: `${b.raw.summary} (two)` })];
    const syncedAt = new Date();
    await writer.compareStored('tickets', scope, page, BOOKKEEPING, syncedAt);
    // Between the compare and the write, the store's copy of b moves (a write-back, say): the write must
    // see that copy, not the one the compare read.
    const moved = { ...b.raw, summary: `${b.raw.summary} (moved in the store)` };
    await svc.services.ds.query(
      `UPDATE tickets SET raw = $3::jsonb, raw_hash = 'moved-in-the-store' WHERE tenant_id = $1 AND connection_id = $2 AND source_id = $4`,
      [scope.tenantId, scope.connectionId, JSON.stringify(moved), b.source_id]);
    const prepared = await writer.prepare('tickets', scope, page, syncedAt);
    const result = await svc.services.ds.transaction((manager) => writer.writePage(manager, prepared));
    expect(result.created).toEqual([]);
    const before = Object.fromEntries(result.updated.map((u) => [u.record.sourceId, u.before.raw]));
    expect(before[a.source_id]).toEqual(a.raw);
    expect(before[b.source_id]).toEqual(moved);
    const [row] = await svc.services.ds.query('SELECT raw FROM tickets WHERE tenant_id = $1 AND connection_id = $2 AND source_id = $3', [scope.tenantId, scope.connectionId, a.source_id]);
    expect(row.raw.summary).toBe(`${a.raw.summary} (one)`);
  });
});
