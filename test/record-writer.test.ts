/**
 * The record writer against the store (src/sync/record-writer.ts): how a fetched page stands against
 * what is stored (compareStored: a touch, where only bookkeeping keys moved, from an edit), and the page's
 * write that follows, which takes the rows compareStored read instead of reading them again, and still
 * sees a row that moved in the store, or was stored, between the two; and the write planned before its
 * transaction from those rows (expect), which says whether it wrote as planned; and a planned page of one
 * statement written alone, with no transaction (writeAlone).
 */
import type { EntityManager } from 'typeorm';
import { ENTITY_BY_RESOURCE, RecordWriter } from '../src/sync/record-writer';
import { mapTicket, vendorUpdatedAt } from '../src/connectors/connectwise/mapping';
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
/** Records each statement `manager` runs in `into`, until the function it answers puts its query back. */
function recordStatements(manager: EntityManager, into: string[]): () => void {
  const query = manager.query;
  manager.query = ((sql: string, params?: unknown[]) => { into.push(sql); return query.call(manager, sql, params); }) as typeof manager.query;
  return () => { manager.query = query; };
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

  it('reads nothing more of the store where the compare read every record of the page', async () => {
    const [, , c, d] = await stored(4);
    const writer = new RecordWriter(svc.services.ds);
    const page = [fetched({ ...c.raw, summary: `${c.raw.summary} (three)` }), fetched({ ...d.raw, summary: `${d.raw.summary} (four)` })];
    const syncedAt = new Date();
    await writer.compareStored('tickets', scope, page, BOOKKEEPING, syncedAt);
    const prepared = await writer.prepare('tickets', scope, page, syncedAt);
    const statements: string[] = [];
    const result = await svc.services.ds.transaction((manager) => { recordStatements(manager, statements); return writer.writePage(manager, prepared); });
    expect(result.updated.map((u) => [u.record.sourceId, u.before.raw])).toEqual([[c.source_id, c.raw], [d.source_id, d.raw]]);
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatch(/^WITH written AS \(INSERT INTO "tickets"/);
  });

  it('writes a record stored between the compare and the write as an update of the row it found, once', async () => {
    const [e] = await stored(1);
    const writer = new RecordWriter(svc.services.ds);
    const sourceId = '918273645';
    const page = [fetched({ ...e.raw, id: Number(sourceId), summary: 'came in twice' })];
    const syncedAt = new Date();
    const compared = await writer.compareStored('tickets', scope, page, BOOKKEEPING, syncedAt);
    expect([...compared.settled, ...compared.unsettled, ...compared.touched, ...compared.edited]).toEqual([]);
    // Another writer stores it meanwhile (a write-back that created it, say), with another payload.
    const other = { ...e.raw, id: Number(sourceId), summary: 'stored by another writer' };
    await svc.services.ds.query(
      `INSERT INTO tickets (tenant_id, connection_id, source_id, raw, raw_hash, synced_at, summary)
       VALUES ($1, $2, $3, $4::jsonb, 'another-writer', now(), 'stored by another writer')`,
      [scope.tenantId, scope.connectionId, sourceId, JSON.stringify(other)]);
    const prepared = await writer.prepare('tickets', scope, page, syncedAt);
    const result = await svc.services.ds.transaction((manager) => writer.writePage(manager, prepared));
    expect(result.created).toEqual([]);
    expect(result.updated.map((u) => [u.record.sourceId, u.before.raw])).toEqual([[sourceId, other]]);
    const rows = await svc.services.ds.query('SELECT summary FROM tickets WHERE tenant_id = $1 AND connection_id = $2 AND source_id = $3', [scope.tenantId, scope.connectionId, sourceId]);
    expect(rows).toEqual([{ summary: 'came in twice' }]);
  });
});

describe('a page planned before its transaction (expect)', () => {
  it('expects the updates its write then makes, and the write runs only its upsert', async () => {
    const [, , , , f, g] = await stored(6);
    const writer = new RecordWriter(svc.services.ds);
    // g as the vendor answers it, which is how it is stored (its stored copy has its keys reordered: another hash).
    const cw = svc.services.simulators!.connectwise as ConnectWiseSimulator;
    const page = [fetched({ ...f.raw, summary: `${f.raw.summary} (five)` }), fetched(JSON.parse(JSON.stringify(cw.get('sandbox-alpha', 'tickets', Number(g.source_id)))))];
    const syncedAt = new Date();
    await writer.compareStored('tickets', scope, page, BOOKKEEPING, syncedAt);
    const prepared = await writer.prepare('tickets', scope, page, syncedAt);
    const expected = await writer.expect(prepared, false);
    // g is stored as fetched: nothing to write.
    expect(expected?.updated.map((u) => [u.record.sourceId, u.before.raw])).toEqual([[f.source_id, f.raw]]);
    const statements: string[] = [];
    const result = await svc.services.ds.transaction((manager) => { recordStatements(manager, statements); return writer.writePage(manager, prepared); });
    expect(result.asExpected).toBe(true);
    expect(result.updated).toEqual(expected!.updated);
    expect(result.unchanged).toBe(1);
    expect(statements).toHaveLength(1);
    const [row] = await svc.services.ds.query('SELECT summary FROM tickets WHERE tenant_id = $1 AND connection_id = $2 AND source_id = $3', [scope.tenantId, scope.connectionId, f.source_id]);
    expect(row.summary).toBe(`${f.raw.summary} (five)`);
  });

  it('says it did not write as expected when a row moved after the plan, and carries the row it replaced', async () => {
    const [, , , , , , h] = await stored(7);
    const writer = new RecordWriter(svc.services.ds);
    const page = [fetched({ ...h.raw, summary: `${h.raw.summary} (seven)` })];
    const syncedAt = new Date();
    await writer.compareStored('tickets', scope, page, BOOKKEEPING, syncedAt);
    const prepared = await writer.prepare('tickets', scope, page, syncedAt);
    expect((await writer.expect(prepared, false))?.updated.map((u) => u.before.raw)).toEqual([h.raw]);
    const moved = { ...h.raw, summary: `${h.raw.summary} (moved after the plan)` };
    await svc.services.ds.query(
      `UPDATE tickets SET raw = $3::jsonb, raw_hash = 'moved-after-the-plan' WHERE tenant_id = $1 AND connection_id = $2 AND source_id = $4`,
      [scope.tenantId, scope.connectionId, JSON.stringify(moved), h.source_id]);
    const result = await svc.services.ds.transaction((manager) => writer.writePage(manager, prepared));
    expect(result.asExpected).toBe(false);
    expect(result.updated.map((u) => [u.record.sourceId, u.before.raw])).toEqual([[h.source_id, moved]]);
    const [row] = await svc.services.ds.query('SELECT summary FROM tickets WHERE tenant_id = $1 AND connection_id = $2 AND source_id = $3', [scope.tenantId, scope.connectionId, h.source_id]);
    expect(row.summary).toBe(`${h.raw.summary} (seven)`);
  });

  it('reads what no compare read before the transaction, which then holds only the upsert', async () => {
    const [, , , , , , , i, j] = await stored(9);
    const writer = new RecordWriter(svc.services.ds);
    const page = [fetched({ ...i.raw, summary: `${i.raw.summary} (eight)` }), fetched({ ...j.raw, summary: `${j.raw.summary} (nine)` })];
    const syncedAt = new Date();
    // i compared (as a connector that compares does), j not: the plan reads j.
    await writer.compareStored('tickets', scope, page.slice(0, 1), BOOKKEEPING, syncedAt);
    const prepared = await writer.prepare('tickets', scope, page, syncedAt);
    const expected = await writer.expect(prepared, false);
    expect(expected?.updated.map((u) => [u.record.sourceId, u.before.raw])).toEqual([[i.source_id, i.raw], [j.source_id, j.raw]]);
    expect([expected?.created, expected?.statements]).toEqual([0, 1]);
    const statements: string[] = [];
    const result = await svc.services.ds.transaction((manager) => { recordStatements(manager, statements); return writer.writePage(manager, prepared); });
    expect(result.asExpected).toBe(true);
    expect(result.updated).toEqual(expected!.updated);
    expect(statements).toHaveLength(1);
  });
});

describe('a page of one statement written alone (writeAlone)', () => {
  it('writes what was planned with no transaction, and leaves a row that moved after the plan to a transaction', async () => {
    const [k] = await stored(10).then((rows) => rows.slice(9));
    const writer = new RecordWriter(svc.services.ds);
    const fresh = { ...k.raw, id: 918273700, summary: 'new at the vendor' };
    const page = [fetched(fresh), fetched({ ...k.raw, summary: `${k.raw.summary} (ten)` })];
    const prepared = await writer.prepare('tickets', scope, page, new Date());
    const expected = await writer.expect(prepared, false);
    expect([expected?.created, expected?.updated.length, expected?.statements]).toEqual([1, 1, 1]);
    // k moves in the store after the plan (a write-back, say).
    const moved = { ...k.raw, summary: `${k.raw.summary} (moved after the plan)` };
    await svc.services.ds.query(
      `UPDATE tickets SET raw = $3::jsonb, raw_hash = 'moved-after-the-plan' WHERE tenant_id = $1 AND connection_id = $2 AND source_id = $4`,
      [scope.tenantId, scope.connectionId, JSON.stringify(moved), k.source_id]);
    const statements: string[] = [];
    const restore = recordStatements(svc.services.ds.manager, statements);
    const alone = await writer.writeAlone(prepared).finally(restore);
    // The insert alone, no transaction around it: the new record is stored, k is left for a transaction.
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatch(/^WITH written AS \(INSERT INTO "tickets"/);
    expect(alone.result.created.map((c) => c.record.sourceId)).toEqual([String(fresh.id)]);
    expect(alone.result.updated).toEqual([]);
    expect(alone.result.asExpected).toBe(false);
    expect(alone.rest?.records.map((r) => r.record.sourceId)).toEqual([k.source_id]);
    const rest = await svc.services.ds.transaction((m) => writer.writePage(m, alone.rest!));
    expect(rest.updated.map((u) => [u.record.sourceId, u.before.raw])).toEqual([[k.source_id, moved]]);
    const rows: { source_id: string; summary: string }[] = await svc.services.ds.query('SELECT source_id, summary FROM tickets WHERE tenant_id = $1 AND connection_id = $2 AND source_id = ANY($3::text[])',
      [scope.tenantId, scope.connectionId, [k.source_id, String(fresh.id)]]);
    expect(Object.fromEntries(rows.map((r) => [r.source_id, r.summary]))).toEqual({ [k.source_id]: `${k.raw.summary} (ten)`, [String(fresh.id)]: 'new at the vendor' });
  });
});

describe('a first read of a resource (expect with firstRead)', () => {
  it('reads nothing and inserts; a record stored after all is found by the insert and written after it, as an update', async () => {
    const [, , , , , , , , , , m] = await stored(11);
    const writer = new RecordWriter(svc.services.ds);
    const fresh = { ...m.raw, id: 918273800, summary: 'new at the first read' };
    const page = [fetched(fresh), fetched({ ...m.raw, summary: `${m.raw.summary} (eleven)` })];
    const prepared = await writer.prepare('tickets', scope, page, new Date());
    const statements: string[] = [];
    const restore = recordStatements(svc.services.ds.manager, statements);
    const [expected, alone] = await (async () => [await writer.expect(prepared, false, true), await writer.writeAlone(prepared)] as const)().finally(restore);
    expect([expected?.created, expected?.updated, expected?.statements]).toEqual([2, [], 1]);
    expect(statements).toHaveLength(1);
    expect(alone.result.created.map((c) => c.record.sourceId)).toEqual([String(fresh.id)]);
    expect(alone.rest?.records.map((r) => r.record.sourceId)).toEqual([m.source_id]);
    const rest = await svc.services.ds.transaction((t) => writer.writePage(t, alone.rest!));
    expect(rest.created).toEqual([]);
    expect(rest.updated.map((u) => [u.record.sourceId, u.before.raw])).toEqual([[m.source_id, m.raw]]);
    const rows: { source_id: string; summary: string }[] = await svc.services.ds.query('SELECT source_id, summary FROM tickets WHERE tenant_id = $1 AND connection_id = $2 AND source_id = ANY($3::text[])',
      [scope.tenantId, scope.connectionId, [m.source_id, String(fresh.id)]]);
    expect(Object.fromEntries(rows.map((r) => [r.source_id, r.summary]))).toEqual({ [m.source_id]: `${m.raw.summary} (eleven)`, [String(fresh.id)]: 'new at the first read' });
  });
});

describe('the record tables', () => {
  // A sync rewrites what changed: with room on its page, the new version of a record stays on that page
  // and none of the table's indexes is touched (entities/migrations, record fill factor).
  it('keep an edited record on its page, and every table the writer fills leaves that room', async () => {
    // Records of their own, written as a first sync writes them: onto pages no other test has edited on.
    const [model] = await stored(1);
    const writer = new RecordWriter(svc.services.ds);
    const write = async (page: FetchedRecord[]) => {
      const prepared = await writer.prepare('tickets', scope, page, new Date());
      return svc.services.ds.transaction((manager) => writer.writePage(manager, prepared));
    };
    const natives = Array.from({ length: 200 }, (_, i) => ({ ...model.raw, id: 900_000 + i, summary: `Room on the page ${i}` }));
    expect((await write(natives.map(fetched))).created.length).toBe(200);
    const placed = async (sourceIds: string[]) => Object.fromEntries((await svc.services.ds.query(
      'SELECT source_id, ctid::text AS ctid FROM tickets WHERE tenant_id = $1 AND connection_id = $2 AND source_id = ANY($3::text[])',
      [scope.tenantId, scope.connectionId, sourceIds]) as { source_id: string; ctid: string }[]).map((r) => [r.source_id, r.ctid.slice(1).split(',')[0]]));
    const everyTenth = natives.filter((_, i) => i % 10 === 5);
    const before = await placed(everyTenth.map((n) => String(n.id)));
    expect(new Set(Object.values(before)).size).toBeGreaterThan(1);
    const result = await write(everyTenth.map((n) => fetched({ ...n, summary: `${n.summary} (edited in place)` })));
    expect(result.updated.length).toBe(everyTenth.length);
    expect(await placed(everyTenth.map((n) => String(n.id)))).toEqual(before);

    const tables = Object.values(ENTITY_BY_RESOURCE).map((entity) => svc.services.ds.getMetadata(entity).tableName);
    const options: { relname: string; reloptions: string[] | null }[] = await svc.services.ds.query(
      'SELECT relname, reloptions FROM pg_class WHERE relname = ANY($1::text[]) AND relkind = $2 AND relnamespace = to_regnamespace(current_schema())', [tables, 'r']);
    expect(options.map((o) => o.relname).sort()).toEqual([...tables].sort());
    for (const o of options) expect([o.relname, o.reloptions]).toEqual([o.relname, ['fillfactor=80']]);
  });
});
