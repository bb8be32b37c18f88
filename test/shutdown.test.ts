/**
 * Graceful shutdown finishes the jobs in flight (docs/architecture.md, Operations), but a job parked on a spent
 * hourly API budget could hold it for up to an hour: at close, a vendor call that would wait for its
 * budget is not sent, and the close completes. (The bench hung here: refresh syncs after its commits
 * had spent the bench connection's sync share, and the service's close waited on them.)
 * Nor does a keep-alive connection whose request was under way at close (src/http/drain.ts).
 */
import { Connection, SyncState } from '../entities';
import { startTestService, type TestService } from './support/service';

let svc: TestService;
afterEach(async () => { await svc?.close().catch(() => undefined); });

/** Bounded poll: resolves when `check` holds, throws after `tries` looks. */
async function until(check: () => Promise<boolean>, tries = 200, everyMs = 50): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error('condition never held');
}

it('a sync waiting on a spent budget does not hold the close', async () => {
  svc = await startTestService();
  const repo = svc.services.ds.getRepository(Connection);
  const psa = (await repo.find({ where: { tenantId: svc.alphaId, kind: 'psa' } }))[0];
  // Two calls an hour: the first sync already spent more than sync's share, so any further sync call waits.
  await repo.update({ id: psa.id }, { settings: { ...psa.settings, budget: { requests_per_hour: 2, concurrent: 1 } } });
  const before = (await svc.services.budgets.snapshot({ ...psa, settings: { budget: { requests_per_hour: 2 } } })).usedLastHour;
  expect(before).toBeGreaterThanOrEqual(2);

  const queuedAt = new Date();
  await svc.services.queue.add('sync.connection', { tenantId: svc.alphaId, connectionId: psa.id, resources: ['tickets'] },
    { jobId: `sync-${psa.id}-shutdown-test`, attempts: 1 });
  // The job is in flight once it marked the resource running; its first vendor call then waits on the budget.
  await until(async () => {
    const s = await svc.services.ds.getRepository(SyncState).findOneBy({ connectionId: psa.id, resource: 'tickets' });
    return s?.lastStatus === 'running' && s.lastAttemptAt != null && s.lastAttemptAt >= queuedAt;
  });
  await new Promise((r) => setTimeout(r, 300));
  const after = (await svc.services.budgets.snapshot({ ...psa, settings: { budget: { requests_per_hour: 2 } } })).usedLastHour;
  expect(after).toBe(before); // parked: nothing admitted, nothing sent

  // Without the stop, close waits for the job, which waits for the hour to slide.
  const closed = await Promise.race([
    svc.close().then(() => 'closed'),
    new Promise((r) => setTimeout(() => r('still waiting after 60 s'), 60_000).unref()),
  ]);
  expect(closed).toBe('closed');
}, 120_000);

it('a vendor call under way at close does not hold it by its keep-alive connection (the sandbox simulators are on this server)', async () => {
  svc = await startTestService();
  const simulators = Object.values(svc.services.simulators!);
  // Every answer takes 400 ms, so the close below comes while a vendor call is on its way.
  for (const sim of simulators) { sim.faults.setLatency(400); sim.faults.resetLog(); }
  const connections = await svc.services.ds.getRepository(Connection).find({ where: { tenantId: svc.betaId } });
  for (const c of connections) {
    await svc.services.queue.add('sync.connection', { tenantId: svc.betaId, connectionId: c.id, full: true },
      { jobId: `sync-${c.id}-drain-test`, attempts: 1 });
  }
  // A request is logged as it comes in, and answered 400 ms later.
  await until(async () => simulators.some((sim) => sim.faults.requests.length > 0), 400, 5);
  // Without draining, the close waited for that call's connection to reach the client's keep-alive timeout (64 s).
  const closed = await Promise.race([
    svc.close().then(() => 'closed'),
    new Promise((r) => setTimeout(() => r('still waiting after 30 s'), 30_000).unref()),
  ]);
  expect(closed).toBe('closed');
}, 120_000);
