/**
 * Exactly once under take-over (docs/architecture.md, Writes), over HTTP on both runtimes: the vendor holds a
 * ticket create before doing it, the caller gives up waiting (503) and retries with the same key at
 * once, so the take-over's lookup by marker finds nothing yet. Without the fence the take-over created a
 * second ticket; with it, the take-over waits for the first call's lease and then finds its ticket.
 * And (item 4) a commit left in progress by a process that died does not block its key after a restart.
 */
import { startTestService, type TestService } from './support/service';
import { IdempotencyService } from '../src/writes/idempotency.service';
import { vendorWriteProcessor } from '../jobs/processors/vendor-write.processor';

let svc: TestService;
let cw: any;
const A = (p: string) => `/tenants/${svc.alphaId}${p}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  // The request waits 2 s for its vendor write instead of 120 s, so the race happens in seconds.
  svc = await startTestService({}, { env: { WRITE_WAIT_MS: '2000' } });
  cw = svc.services.simulators!.connectwise;
}, 120_000);
afterAll(async () => { await svc?.close(); });

it('a retry that takes over while the first vendor call is held creates nothing more: one ticket in every trial', async () => {
  for (let trial = 0; trial < 3; trial++) {
    const summary = `Fence race ${trial} ${Date.now()}`;
    const body = { company_name: 'Contoso Ltd', summary, dry_run: false, idempotency_key: `fence-${trial}-${Date.now()}` };
    cw.faults.inject({ status: 503, times: 1, pathIncludes: '/service/tickets', method: 'POST', holdRequestMs: 3500 });
    const first = await svc.api(A('/tickets'), { method: 'POST', json: body });
    expect([first.status, first.body.code]).toEqual([503, 'vendor_unavailable']);
    const answers: number[] = [];
    let last = first;
    for (let i = 0; i < 60 && last.status >= 300; i++) {
      last = await svc.api(A('/tickets'), { method: 'POST', json: body });
      answers.push(last.status);
      if (last.status >= 300) await sleep(200);
    }
    expect(last.status).toBe(201);
    // Every answer before it was a documented "not yet": 503 (the first call still in flight) or 409 (a retry still waiting).
    for (const s of answers.slice(0, -1)) expect([409, 503]).toContain(s);
    // Past the held call's own end: whatever the first call was going to create has been created.
    await sleep(4000);
    const tickets = (cw.list('sandbox-alpha', 'tickets') as any[]).filter((t) => t.summary === summary);
    expect(tickets.map((t) => String(t.id))).toEqual([String(last.body.ticket_ref)]);
    const replay = await svc.api(A('/tickets'), { method: 'POST', json: body });
    expect(replay.body).toMatchObject({ ticket_ref: last.body.ticket_ref, idempotent_replay: true });
  }
}, 120_000);

it('a finished job hands its lease back and the stored outcome frees it: a retry after a refusal takes the lease at once', async () => {
  const leaseOf = async (key: string) => (await svc.services.ds.query('SELECT lease_owner FROM idempotency_records WHERE key = $1', [key]))[0]?.lease_owner;
  const summary = `Lease handed back ${Date.now()}`;
  const body = { company_name: 'Contoso Ltd', summary, dry_run: false, idempotency_key: `handback-${Date.now()}` };
  // A Retry-After longer than the request may wait: answered 429 at once, the key failed, its lease freed with it.
  cw.faults.inject({ status: 429, times: 1, retryAfterSeconds: 300, pathIncludes: '/service/tickets', method: 'POST' });
  const throttled = await svc.api(A('/tickets'), { method: 'POST', json: body });
  expect([throttled.status, throttled.body.code]).toEqual([429, 'rate_limited']);
  expect(await leaseOf(body.idempotency_key)).toBeNull();
  // Were the lease still held, the take-over's job would wait for it past this file's 2 s answer time (503).
  const retry = await svc.api(A('/tickets'), { method: 'POST', json: body });
  expect(retry.status).toBe(201);
  expect(await leaseOf(body.idempotency_key)).toBeNull();
  expect((cw.list('sandbox-alpha', 'tickets') as any[]).filter((t) => t.summary === summary)).toHaveLength(1);
}, 60_000);

it('a commit left in progress by a process that died is released at start: the retry answers at once, without a second ticket', async () => {
  const summary = `Left in progress ${Date.now()}`;
  const body = { company_name: 'Contoso Ltd', summary, dry_run: false, idempotency_key: `orphan-${Date.now()}` };
  const landed = await svc.api(A('/tickets'), { method: 'POST', json: body });
  expect(landed.status).toBe(201);
  // What a crash between the vendor's answer and storing ours leaves: the ticket at the vendor, the key in
  // progress, owned by a process that no longer beats.
  await svc.services.ds.query(
    `UPDATE idempotency_records SET state = 'in_progress', response_status = NULL, response_body = NULL, owner_instance = 'dead-process', updated_at = now()
      WHERE key = $1`, [body.idempotency_key]);
  await svc.services.writeFence.releaseOrphans(); // what a start (and every heartbeat) runs
  const retry = await svc.api(A('/tickets'), { method: 'POST', json: body });
  expect(retry.status).toBe(201);
  expect(retry.body.ticket_ref).toBe(landed.body.ticket_ref);
  expect((cw.list('sandbox-alpha', 'tickets') as any[]).filter((t) => t.summary === summary)).toHaveLength(1);
});

it('a first job the worker takes only after its request answered frees the lease reserved with the key, so the retry is not held for LEASE_SECONDS', async () => {
  const s = svc.services;
  const [isv] = await s.ds.query('SELECT id FROM isvs ORDER BY created_at LIMIT 1');
  const leaseOf = async (id: string) => (await s.ds.query('SELECT lease_owner FROM idempotency_records WHERE id = $1', [id]))[0]?.lease_owner;
  const process = vendorWriteProcessor(s.access, s.box, s.http, s.budgets, s.writeFence);
  // What a worker cut off from Redis meets when the link returns: the job, delivered for the first time, after its request answered.
  const late = async (redelivered: boolean) => {
    const r = await new IdempotencyService(s.ds, s.writeFence).reserve(
      { isvId: isv.id, tenantId: svc.alphaId, operation: 'create_ticket', key: `late-job-${redelivered}-${Date.now()}` }, 'hash', Date.now() + 2000);
    if (r.kind !== 'new' || !r.lease) throw new Error(`expected a new reservation holding its lease, got ${r.kind}`);
    expect(await leaseOf(r.id)).toBe(r.lease.token);
    const answer = await process({
      id: `late-${redelivered}`, name: 'vendor.write', attempt: 1, attempts: 5, redelivered, scheduled: false,
      data: {
        tenantId: svc.alphaId, connectionId: '00000000-0000-0000-0000-000000000000', write: { name: 'create_ticket', input: {} } as never,
        reservationId: r.id, generation: r.generation, lease: r.lease, answerBy: new Date(Date.now() - 1000).toISOString(),
      },
    });
    expect(answer).toMatchObject({ ok: false, status: 503 });
    return leaseOf(r.id);
  };
  expect(await late(false)).toBeNull();
  // A redelivered job may be the one that sent under that lease before its worker died: its lease stays until it lapses.
  expect(await late(true)).not.toBeNull();
});

it('a first attempt that cannot take its lease (the database out of reach) frees the lease reserved with the key once the database answers again', async () => {
  const s = svc.services;
  const [isv] = await s.ds.query('SELECT id FROM isvs ORDER BY created_at LIMIT 1');
  const leaseOf = async (id: string) => (await s.ds.query('SELECT lease_owner FROM idempotency_records WHERE id = $1', [id]))[0]?.lease_owner;
  // The worker's side of a worker<->PostgreSQL partition: taking the lease fails, and so do the first two
  // releases; the third reaches the database (the real one, through the real fence).
  let releasesRefused = 2;
  const cutOff = Object.create(s.writeFence) as typeof s.writeFence;
  cutOff.acquire = async () => { throw new Error('Connection terminated due to connection timeout'); };
  cutOff.release = async (...args: Parameters<typeof s.writeFence.release>) => {
    if (releasesRefused-- > 0) throw new Error('Connection terminated due to connection timeout');
    return s.writeFence.release(...args);
  };
  const r = await new IdempotencyService(s.ds, s.writeFence).reserve(
    { isvId: isv.id, tenantId: svc.alphaId, operation: 'create_ticket', key: `cut-off-${Date.now()}` }, 'hash', Date.now() + 60_000);
  if (r.kind !== 'new' || !r.lease) throw new Error(`expected a new reservation holding its lease, got ${r.kind}`);
  const process = vendorWriteProcessor(s.access, s.box, s.http, s.budgets, cutOff);
  // Another process's reservation: this worker cannot adopt it and must take it by its token.
  const lease = { ...r.lease, token: `elsewhere/${r.lease.token.split('/').slice(1).join('/')}` };
  await s.ds.query('UPDATE idempotency_records SET lease_owner = $2 WHERE id = $1', [r.id, lease.token]);
  await expect(process({
    id: 'cut-off', name: 'vendor.write', attempt: 1, attempts: 5, redelivered: false, scheduled: false,
    data: { tenantId: svc.alphaId, connectionId: '00000000-0000-0000-0000-000000000000', write: { name: 'create_ticket', input: {} } as never, reservationId: r.id, generation: r.generation, lease, answerBy: new Date(Date.now() + 60_000).toISOString() },
  })).rejects.toThrow(/connection timeout/);
  expect(await leaseOf(r.id)).toBe(lease.token);
  // Tried every 2 s: free after the third try, well before LEASE_SECONDS.
  for (let i = 0; i < 40 && (await leaseOf(r.id)) !== null; i++) await sleep(250);
  expect(await leaseOf(r.id)).toBeNull();
  expect(releasesRefused).toBe(-1);
});
