/**
 * The idempotency state machine on the real store: reserve, in progress, conflict, replay, release
 * after failure (take-over, which must reconcile), a refusal before any send that keeps nothing, abandoned in-progress take-over, and one winner
 * among concurrent reservations of one key.
 */
import { randomUUID } from 'node:crypto';
import { openDatabase, type Database } from '../db/database';
import { ServiceError } from '../errors/service-error';
import { testDatabaseOptions } from '../../test/support/runtime';
import { IdempotencyService, requestHash, type ReservationRef } from './idempotency.service';
import { auditInsert } from '../audit/audit.store';

let db: Database;
let svc: IdempotencyService;
beforeAll(async () => { db = await openDatabase(testDatabaseOptions()); svc = new IdempotencyService(db.dataSource); }, 60_000);
afterAll(async () => { await db?.close(); });

const scope = () => ({ isvId: randomUUID(), tenantId: randomUUID(), operation: 'ticket.create', key: `k-${randomUUID()}` });
const codeOf = async (p: Promise<unknown>) => p.then(() => 'ok', (e) => (e instanceof ServiceError ? e.code : String(e)));

it('a new key is reserved once; the same key while it runs is in progress', async () => {
  const s = scope();
  const first = await svc.reserve(s, requestHash({ a: 1 }));
  expect(first).toMatchObject({ kind: 'new', takeover: false });
  expect(await codeOf(svc.reserve(s, requestHash({ a: 1 })))).toBe('idempotency_in_progress');
});

it('the same key with another body is a conflict, in progress or completed', async () => {
  const s = scope();
  const r = await svc.reserve(s, requestHash({ a: 1 }));
  expect(await codeOf(svc.reserve(s, requestHash({ a: 2 })))).toBe('idempotency_conflict');
  await svc.complete(r as ReservationRef, { status: 201, body: { ticket_ref: '7' } });
  expect(await codeOf(svc.reserve(s, requestHash({ a: 2 })))).toBe('idempotency_conflict');
});

it('a completed key replays its stored answer; the body hash ignores key order', async () => {
  const s = scope();
  const r = await svc.reserve(s, requestHash({ a: 1, b: { c: 2, d: 3 } }));
  await svc.complete(r as ReservationRef, { status: 201, body: { ticket_ref: '7' } });
  const again = await svc.reserve(s, requestHash({ b: { d: 3, c: 2 }, a: 1 }));
  expect(again).toEqual({ kind: 'replay', answer: { status: 201, body: { ticket_ref: '7' } } });
});

it('a failed commit releases its key: the next reservation takes it over and must reconcile', async () => {
  const s = scope();
  const r = await svc.reserve(s, requestHash({ a: 1 }));
  await svc.fail(r as ReservationRef);
  const again = await svc.reserve(s, requestHash({ a: 1 }));
  expect(again).toEqual({ kind: 'new', id: (r as { id: string }).id, takeover: true, generation: 2, lease: null });
});

it('a commit refused before anything was sent keeps nothing: the corrected body reserves the key afresh', async () => {
  const s = scope();
  const refused = await svc.reserve(s, requestHash({ member: null }));
  await svc.release(refused as ReservationRef);
  expect(await svc.reserve(s, requestHash({ member: '7' }))).toMatchObject({ kind: 'new', takeover: false, generation: 1 });
});

it('a release by a generation that no longer holds the key, or of a key taken over, deletes nothing', async () => {
  const s = scope();
  const first = await svc.reserve(s, requestHash({ a: 1 }));
  await svc.fail(first as ReservationRef);
  const second = await svc.reserve(s, requestHash({ a: 1 }));
  await svc.release(first as ReservationRef);
  expect(await codeOf(svc.reserve(s, requestHash({ a: 2 })))).toBe('idempotency_conflict');
  await svc.complete(second as ReservationRef, { status: 201, body: { ticket_ref: '9' } });
  await svc.release(second as ReservationRef);
  expect(await svc.reserve(s, requestHash({ a: 1 }))).toEqual({ kind: 'replay', answer: { status: 201, body: { ticket_ref: '9' } } });
});

it('reservations racing a release: each is new, in progress or a conflict, never an error, and one at most is new', async () => {
  for (let round = 0; round < 5; round++) {
    const s = scope();
    const refused = await svc.reserve(s, requestHash({ member: null }));
    const [, ...results] = await Promise.all([
      svc.release(refused as ReservationRef),
      ...Array.from({ length: 5 }, () => svc.reserve(s, requestHash({ member: '7' })).then((r) => r.kind, (e) => (e instanceof ServiceError ? e.code : String(e)))),
    ]);
    expect(results.every((r) => ['new', 'idempotency_in_progress', 'idempotency_conflict'].includes(r as string))).toBe(true);
    expect(results.filter((r) => r === 'new').length).toBeLessThanOrEqual(1);
  }
});

it('an in-progress key abandoned by a dead process (10 minutes) is taken over', async () => {
  const s = scope();
  const r = await svc.reserve(s, requestHash({ a: 1 }));
  await db.dataSource.query(`UPDATE idempotency_records SET updated_at = now() - interval '11 minutes' WHERE id = $1`, [(r as { id: string }).id]);
  expect(await svc.reserve(s, requestHash({ a: 1 }))).toMatchObject({ kind: 'new', takeover: true });
});

it('of 10 concurrent reservations of one key exactly one wins', async () => {
  const s = scope();
  const results = await Promise.all(Array.from({ length: 10 }, () => svc.reserve(s, requestHash({ a: 1 })).then((r) => r.kind, (e) => (e as ServiceError).code)));
  expect(results.filter((r) => r === 'new')).toHaveLength(1);
  expect(results.filter((r) => r === 'idempotency_in_progress')).toHaveLength(9);
});

it('two concurrent take-overs of a failed key: exactly one wins', async () => {
  const s = scope();
  const r = await svc.reserve(s, requestHash({ a: 1 }));
  await svc.fail(r as ReservationRef);
  const results = await Promise.all(Array.from({ length: 5 }, () => svc.reserve(s, requestHash({ a: 1 })).then((x) => x.kind, (e) => (e as ServiceError).code)));
  expect(results.filter((x) => x === 'new')).toHaveLength(1);
});

it('a commit that was taken over cannot store its answer or free the key of the new generation', async () => {
  const s = scope();
  const first = await svc.reserve(s, requestHash({ a: 1 }));
  await svc.fail(first as ReservationRef);
  const second = await svc.reserve(s, requestHash({ a: 1 }));
  expect(second).toMatchObject({ kind: 'new', takeover: true, generation: 2 });
  // The first request finishes late: neither its answer nor its failure touches generation 2.
  await svc.complete(first as ReservationRef, { status: 201, body: { ticket_ref: 'stale' } });
  await svc.fail(first as ReservationRef);
  expect(await codeOf(svc.reserve(s, requestHash({ a: 1 })))).toBe('idempotency_in_progress');
  await svc.complete(second as ReservationRef, { status: 201, body: { ticket_ref: '8' } });
  expect(await svc.reserve(s, requestHash({ a: 1 }))).toEqual({ kind: 'replay', answer: { status: 201, body: { ticket_ref: '8' } } });
});

describe('rows stored with the outcome', () => {
  const audit = (tenantId: string, action: string) => (first: number) => auditInsert({ tenantId, action, outcome: 'ok', detail: { n: 1 } }, first);
  const entries = async (tenantId: string) =>
    (await db.dataSource.query('SELECT action FROM audit_entries WHERE tenant_id = $1 ORDER BY action', [tenantId])).map((r: { action: string }) => r.action);

  it('land with the answer, in one statement, however many', async () => {
    const s = scope();
    const r = await svc.reserve(s, requestHash({}));
    await svc.complete(r as ReservationRef, { status: 201, body: { ok: true } }, [audit(s.tenantId, 'a.one'), audit(s.tenantId, 'a.two')]);
    expect(await entries(s.tenantId)).toEqual(['a.one', 'a.two']);
    expect(await svc.reserve(s, requestHash({}))).toMatchObject({ kind: 'replay', answer: { status: 201, body: { ok: true } } });
  });

  it('and with a failure: the key is freed and the rows are kept', async () => {
    const s = scope();
    const r = await svc.reserve(s, requestHash({}));
    await svc.fail(r as ReservationRef, [], [audit(s.tenantId, 'partial')]);
    expect(await entries(s.tenantId)).toEqual(['partial']);
    expect(await svc.reserve(s, requestHash({}))).toMatchObject({ kind: 'new', takeover: true });
  });

  it('a row that cannot be stored stores nothing: no answer, no other row', async () => {
    const s = scope();
    const r = await svc.reserve(s, requestHash({}));
    const broken = () => ({ sql: 'INSERT INTO audit_entries (tenant_id, action, outcome) VALUES ($1::uuid, NULL, NULL)', params: [s.tenantId] });
    await expect(svc.complete(r as ReservationRef, { status: 201, body: {} }, [audit(s.tenantId, 'kept?'), broken])).rejects.toThrow();
    expect(await entries(s.tenantId)).toEqual([]);
    expect(await codeOf(svc.reserve(s, requestHash({})))).toBe('idempotency_in_progress');
  });
});
