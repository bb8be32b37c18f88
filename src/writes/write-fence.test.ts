/**
 * The write fence on the real store (write-fence.ts): one lease per reservation while a vendor call is
 * in flight, a taken-over generation sends nothing, a later call reconciles first, and the commits of a
 * gone process are released, on the embedded default at once and on PostgreSQL after its heartbeats stop.
 */
import { randomUUID } from 'node:crypto';
import { openDatabase, type Database } from '../db/database';
import { ServiceError } from '../errors/service-error';
import { testDatabaseOptions } from '../../test/support/runtime';
import { IdempotencyService, requestHash } from './idempotency.service';
import { WriteFence } from './write-fence';

let db: Database;
let fence: WriteFence;
let other: WriteFence;
let svc: IdempotencyService;
// Three silent beats make an instance gone. Long enough that a loaded machine (CI runs two suites at once on
// two cores) never delays a live fence's beat that far: at 200 ms one was judged gone mid-test, and its
// reservation released under the test's feet.
const HEARTBEAT = 1000;
beforeAll(async () => {
  db = await openDatabase(testDatabaseOptions());
  fence = new WriteFence(db.dataSource, { role: 'all', heartbeatMs: HEARTBEAT, exclusive: false });
  other = new WriteFence(db.dataSource, { role: 'worker', heartbeatMs: HEARTBEAT, exclusive: false });
  await fence.start();
  await other.start();
  svc = new IdempotencyService(db.dataSource, fence);
}, 60_000);
afterAll(async () => { await fence?.stop(); await other?.stop(); await db?.close(); });

const scope = () => ({ isvId: randomUUID(), tenantId: randomUUID(), operation: 'ticket.create', key: `k-${randomUUID()}` });
const codeOf = async (p: Promise<unknown>) => p.then(() => 'ok', (e) => (e instanceof ServiceError ? e.code : String(e)));
const soon = () => Date.now() + 600;

const reservedToken = (r: { kind: string; lease?: { token: string } | null }) => {
  if (r.kind !== 'new' || !r.lease) throw new Error('expected a new reservation holding its lease');
  return r.lease.token;
};

it('one holder at a time; the next call reconciles first', async () => {
  const r = await svc.reserve(scope(), requestHash({}));
  if (r.kind !== 'new') throw new Error('expected a new reservation');
  // The reservation holds the lease: a job without its token waits; the first job (in a worker) takes it
  // over by its token, and that is the call the reservation counted, so no reconcile.
  expect(await other.acquire(r.id, r.generation, 'stranger', soon())).toMatchObject({ kind: 'busy' });
  const first = await other.acquire(r.id, r.generation, 'job-1', soon(), reservedToken(r));
  expect(first).toMatchObject({ kind: 'held', reconcile: false });
  // A live holder keeps it: the second caller waits until its deadline and sends nothing.
  expect(await fence.acquire(r.id, r.generation, 'job-2', soon())).toMatchObject({ kind: 'busy' });
  await other.release(r.id, (first as { token: string }).token);
  expect(await fence.acquire(r.id, r.generation, 'job-2', soon())).toMatchObject({ kind: 'held', reconcile: true });
});

it('a job of a taken-over generation sends nothing', async () => {
  const s = scope();
  const r = await svc.reserve(s, requestHash({}));
  if (r.kind !== 'new') throw new Error('expected a new reservation');
  await svc.fail(r, r.lease ? [r.lease.token] : []); // never handed to a job: freed with the key
  const again = await svc.reserve(s, requestHash({}));
  expect(again).toMatchObject({ kind: 'new', takeover: true, generation: 2, lease: null });
  expect(await fence.acquire(r.id, 1, 'old-job', soon())).toEqual({ kind: 'stale' });
  expect(await fence.acquire(r.id, 2, 'new-job', soon())).toMatchObject({ kind: 'held' });
});

it('the lease of a gone process is taken, and its in-progress commits are released', async () => {
  // It beats at start only (its next beat is a minute away): to the others it falls silent, as if killed.
  // Its requests land at most 100 ms after its send deadline (timeout plus the vendor's margin, shrunk).
  const gone = new WriteFence(db.dataSource, { role: 'api', heartbeatMs: 60_000, exclusive: false, landingMs: 100 });
  await gone.start();
  const s = scope();
  const r = await new IdempotencyService(db.dataSource, gone).reserve(s, requestHash({}), soon());
  if (r.kind !== 'new') throw new Error('expected a new reservation');
  expect(await gone.acquire(r.id, 1, 'job', soon(), reservedToken(r))).toMatchObject({ kind: 'held' });
  // While its process beats, its key is in progress and its lease is held.
  expect(await codeOf(svc.reserve(s, requestHash({})))).toBe('idempotency_in_progress');
  // Three of the observers' beats later it is gone.
  await new Promise((res) => setTimeout(res, HEARTBEAT * 4));
  // A live process's beat released the commit: the key is taken over at once, and the new generation's
  // job takes the gone holder's lease and reconciles before it sends.
  await fence.releaseOrphans();
  expect(await svc.reserve(s, requestHash({}))).toMatchObject({ kind: 'new', takeover: true, generation: 2 });
  expect(await fence.acquire(r.id, 2, 'job-2', soon())).toMatchObject({ kind: 'held', reconcile: true });
  await gone.stop();
});

it('a take-over of a gone holder waits until the holder\'s requests can no longer land', async () => {
  // Requests land up to 400 ms after their send deadline (timeout plus the vendor's margin, shrunk).
  const LANDING = 400;
  const gone = new WriteFence(db.dataSource, { role: 'all', heartbeatMs: 60_000, exclusive: false, landingMs: LANDING });
  await gone.start();
  const s = scope();
  const sendBy = Date.now() + 300; // the first job sends nothing after it
  const r = await new IdempotencyService(db.dataSource, gone).reserve(s, requestHash({}), sendBy);
  if (r.kind !== 'new' || !r.lease) throw new Error('expected a new reservation holding its lease');
  expect(gone.adopt(r.lease, { attempt: 1, redelivered: false })).toMatchObject({ kind: 'held' }); // and then its process dies
  // A restarted process on the embedded default: every other instance is gone, the commit released at start.
  const restarted = new WriteFence(db.dataSource, { role: 'all', heartbeatMs: HEARTBEAT, exclusive: true, landingMs: LANDING });
  await restarted.start();
  const again = await new IdempotencyService(db.dataSource, restarted).reserve(s, requestHash({}));
  expect(again).toMatchObject({ kind: 'new', takeover: true, generation: 2 });
  // The dead job's request may still land: a take-over that must answer before then is told when to retry.
  const early = await restarted.acquire(r.id, 2, 'takeover', Date.now() + 100);
  expect(early).toMatchObject({ kind: 'busy' });
  expect((early as { retryAfterMs: number }).retryAfterMs).toBeGreaterThan(100);
  // One that can wait takes the lease once it has passed, and reconciles first.
  const waited = await restarted.acquire(r.id, 2, 'takeover', Date.now() + 5000);
  expect(waited).toMatchObject({ kind: 'held', reconcile: true });
  const [row] = await db.dataSource.query('SELECT land_by < now() AS passed FROM idempotency_records WHERE id = $1', [r.id]);
  expect(row.passed).toBe(false); // the take-over's own deadline is recorded in turn
  // A write that must start after the holder's send deadline records a later one first; a holder that
  // lost its lease cannot (and so sends nothing).
  const token = (waited as { token: string }).token;
  expect(await restarted.extend(r.id, token, Date.now() + 1000)).toBe(true);
  expect(await restarted.extend(r.id, 'not-the-holder', Date.now() + 1000)).toBe(false);
  // A holder whose every write was answered leaves nothing to wait for.
  await restarted.release(r.id, token, null);
  expect(await restarted.acquire(r.id, 2, 'next', Date.now() + 100)).toMatchObject({ kind: 'held' });
  await restarted.stop();
  await gone.stop();
});

it('on the embedded default every other instance is gone at once', async () => {
  const s = scope();
  const r = await svc.reserve(s, requestHash({})); // owned by `fence`, which is beating
  if (r.kind !== 'new') throw new Error('expected a new reservation');
  // A new process on the same embedded database: the earlier one is dead, its commit released at start.
  const restarted = new WriteFence(db.dataSource, { role: 'all', heartbeatMs: 60_000, exclusive: true });
  await restarted.start();
  expect(await new IdempotencyService(db.dataSource, restarted).reserve(s, requestHash({}))).toMatchObject({ kind: 'new', takeover: true });
  await restarted.stop();
});

describe('the lease taken with the reservation', () => {
  it('is adopted without a round trip only by the first attempt of a first delivery, in the reserving process, while fresh', async () => {
    const r = await svc.reserve(scope(), requestHash({}));
    if (r.kind !== 'new' || !r.lease) throw new Error('expected a new reservation holding its lease');
    expect(fence.adopt(r.lease, { attempt: 1, redelivered: false })).toEqual({ kind: 'held', token: r.lease.token, reconcile: false, sendBy: r.lease.sendBy });
    expect(other.adopt(r.lease, { attempt: 1, redelivered: false })).toBeNull();
    expect(fence.adopt(r.lease, { attempt: 2, redelivered: false })).toBeNull();
    expect(fence.adopt(r.lease, { attempt: 1, redelivered: true })).toBeNull();
    expect(fence.adopt({ ...r.lease, takenAt: Date.now() - 31_000 }, { attempt: 1, redelivered: false })).toBeNull();
    expect(fence.adopt(undefined, { attempt: 1, redelivered: false })).toBeNull();
  });

  it('is held while adopted: nobody else sends; after its release the next call reconciles first', async () => {
    const r = await svc.reserve(scope(), requestHash({}));
    if (r.kind !== 'new' || !r.lease) throw new Error('expected a new reservation holding its lease');
    const adopted = fence.adopt(r.lease, { attempt: 1, redelivered: false });
    expect(adopted).toMatchObject({ kind: 'held' });
    expect(await other.acquire(r.id, 1, 'retry', soon())).toMatchObject({ kind: 'busy' });
    // A redelivered copy does not present the token (it may run beside the first), so it waits too.
    expect(await other.acquire(r.id, 1, 'redelivered', soon(), null)).toMatchObject({ kind: 'busy' });
    await fence.release(r.id, (adopted as { token: string }).token);
    expect(await other.acquire(r.id, 1, 'retry', soon())).toMatchObject({ kind: 'held', reconcile: true });
  });

  it('a commit refused before any job frees it with its key: the take-over sends at once', async () => {
    const s = scope();
    const r = await svc.reserve(s, requestHash({}));
    if (r.kind !== 'new' || !r.lease) throw new Error('expected a new reservation holding its lease');
    await svc.fail(r, r.lease ? [r.lease.token] : []);
    const again = await svc.reserve(s, requestHash({}));
    if (again.kind !== 'new') throw new Error('expected a take-over');
    expect(await other.acquire(again.id, again.generation, 'job', soon())).toMatchObject({ kind: 'held', reconcile: true });
  });

  it('a failed commit whose job had the lease keeps it held until that job frees it', async () => {
    const s = scope();
    const r = await svc.reserve(s, requestHash({}));
    if (r.kind !== 'new' || !r.lease) throw new Error('expected a new reservation holding its lease');
    const adopted = fence.adopt(r.lease, { attempt: 1, redelivered: false }) as { token: string };
    await svc.fail(r, []); // handed out: the job may still be at the vendor
    const again = await svc.reserve(s, requestHash({}));
    if (again.kind !== 'new') throw new Error('expected a take-over');
    expect(await other.acquire(again.id, again.generation, 'takeover-job', soon())).toMatchObject({ kind: 'busy' });
    await fence.release(r.id, adopted.token);
    expect(await other.acquire(again.id, again.generation, 'takeover-job', soon())).toMatchObject({ kind: 'held', reconcile: true });
  });
});
