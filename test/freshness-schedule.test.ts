/**
 * The scheduled checks (src/sync/freshness.ts, src/sync/sweeper.ts): only the resources that are due are
 * checked, each claimed by one check at a time, the earliest deadline first (due time plus half the interval,
 * at most 5 s); a resource with a "changed since?" call costs that call alone when nothing changed,
 * and is read when something did; the plan shortens a busy resource, stretches a quiet one, and `status`
 * shows it. Against the sandbox's simulators over HTTP, on the real store.
 */
import type { ConnectWiseSimulator } from '../src/simulators/connectwise/simulator';
import type { SyncReport } from '../src/sync/sync.service';
import { CADENCE_BOUNDS } from '../src/sync/freshness';
import { SyncStatesStore } from '../src/sync/sync-states.store';
import { FreshnessSweeper } from '../src/sync/sweeper';
import { readConnector } from '../src/connectors/registry';
import { startTestService, type TestService } from './support/service';

let svc: TestService;
let cw: ConnectWiseSimulator;
let connectionId: string;
beforeAll(async () => {
  svc = await startTestService();
  cw = svc.services.simulators!.connectwise as ConnectWiseSimulator;
  connectionId = (await svc.services.ds.query(
    "SELECT id FROM connections WHERE tenant_id = $1 AND connector = 'connectwise'", [svc.alphaId]))[0].id;
}, 120_000);
afterAll(async () => { await svc?.close(); });

const ALPHA = 'sandbox-alpha';
/** One scheduled check of the connection: what is due, claimed, then checked (the sweeper claims fleet-wide, as tested below). */
const tick = async () => svc.services.sync.syncConnection(connectionId, {
  claimed: await new SyncStatesStore(svc.services.ds).claimDue(svc.alphaId, connectionId, readConnector('connectwise').resources),
});
/** Test setup: the named resources' next check is now (instead of waiting out their interval). */
const makeDue = (resources: string[]) => svc.services.ds.query(
  'UPDATE sync_states SET next_check_at = now() WHERE connection_id = $1 AND resource = ANY($2::text[])', [connectionId, resources]);
const checked = (report: SyncReport) => report.resources.map((r) => [r.resource, r.mode]);
const ticketEvents = async () => (await svc.api(`/tenants/${svc.alphaId}/connections/events?kind=ticket&limit=500`)).body.events as any[];
const resourceState = async (resource: string) => {
  const psa = (await svc.api(`/tenants/${svc.alphaId}/status`)).body.connections.find((c: any) => c.id === connectionId);
  return psa.resources.find((r: any) => r.resource === resource);
};

describe('the scheduler checks what is due, cheaply', () => {
  it('right after a sync nothing is due: a tick reads nothing and calls the vendor not once', async () => {
    await svc.api(`/tenants/${svc.alphaId}/sync`, { method: 'POST', json: {} });
    cw.faults.resetLog();
    const report = await tick();
    expect(report.resources).toEqual([]);
    expect(cw.faults.countRequests()).toBe(0);
  });

  it('a due resource with nothing new costs its "changed since?" calls alone, and status shows it current', async () => {
    await makeDue(['tickets']);
    cw.faults.resetLog();
    const report = await tick();
    expect(checked(report)).toEqual([['tickets', 'probe']]);
    // Service and project tickets: one count each, and no page of either.
    expect(cw.faults.countRequests('/count')).toBe(2);
    expect(cw.faults.countRequests()).toBe(2);
    const state = await resourceState('tickets');
    expect(state.lag_seconds).toBeLessThanOrEqual(1);
    // Quiet: its next check comes later than a busy one's would.
    expect(state.interval_seconds * 1000).toBeGreaterThan(CADENCE_BOUNDS.hot.minMs);
    expect(state.interval_seconds * 1000).toBeLessThanOrEqual(CADENCE_BOUNDS.hot.maxMs);
    expect(Date.parse(state.next_check_at)).toBeGreaterThan(Date.now());
  });

  it('a change at the vendor is read at the next check, its event is in the feed, and the resource is busy again', async () => {
    const quietInterval = (await resourceState('tickets')).interval_seconds;
    const before = (await ticketEvents()).length;
    cw.update(ALPHA, 'tickets', 30101, { summary: 'Scheduler: printer jams again' });
    await makeDue(['tickets']);
    const report = await tick();
    expect(checked(report)).toEqual([['tickets', 'incremental']]);
    const events = (await ticketEvents()).slice(before);
    expect(events.map((e) => [e.kind, e.subject_ref])).toEqual([['ticket.updated', '30101']]);
    // Busy again: checked sooner than while it was quiet (as soon as the budget allows, the read having cost more calls).
    expect((await resourceState('tickets')).interval_seconds).toBeLessThan(quietInterval);
  });

  it('two ticks at once never check the same resource twice', async () => {
    await makeDue(['tickets', 'companies', 'contacts', 'boards', 'statuses', 'priorities', 'members', 'projects', 'agreements', 'agreement_lines', 'products']);
    const [a, b] = await Promise.all([tick(), tick()]);
    const all = [...a.resources, ...b.resources].map((r) => r.resource);
    expect(all.length).toBe(11);
    expect(new Set(all).size).toBe(11);
  });

  it('status shows each resource\'s interval: tickets in seconds, the catalogue and companies in minutes', async () => {
    const psa = (await svc.api(`/tenants/${svc.alphaId}/status`)).body.connections.find((c: any) => c.id === connectionId);
    const interval = (r: string) => psa.resources.find((x: any) => x.resource === r).interval_seconds * 1000;
    expect(interval('tickets')).toBeLessThanOrEqual(CADENCE_BOUNDS.hot.maxMs);
    for (const r of ['companies', 'products', 'boards']) expect(interval(r)).toBeGreaterThanOrEqual(CADENCE_BOUNDS.cold.minMs);
    expect(psa.budget.used_last_hour).toBeLessThanOrEqual(psa.budget.requests_per_hour);
  });

  it('the sweeper claims the earliest deadline first, with its connection\'s other due resources, and two sweepers never claim one twice', async () => {
    const store = new SyncStatesStore(svc.services.ds);
    const ds = svc.services.ds;
    const [rmm] = await ds.query("SELECT connection_id AS id FROM sync_states WHERE resource = 'devices' LIMIT 1");
    try {
      // The RMM's other resources not due (its incidents, every 10 s, may have come due while the tests before ran),
      // nor the PSA's but its companies.
      await ds.query("UPDATE sync_states SET next_check_at = now() + interval '1 hour' WHERE connection_id = $1 AND resource <> 'devices'", [rmm.id]);
      await ds.query("UPDATE sync_states SET next_check_at = now() + interval '1 hour' WHERE connection_id = $1 AND resource <> 'companies'", [connectionId]);
      // Overdue by an hour and more (longer than any other state of the store is): a list checked every 30 min,
      // due 70 min ago, goes before devices checked every 10 s, due 60 min ago. However long its interval,
      // a resource may yield to others for 5 s only: half its interval would have let the list wait 15 min.
      await ds.query("UPDATE sync_states SET next_check_at = now() - interval '70 minutes', interval_seconds = 1800 WHERE connection_id = $1 AND resource = 'companies'", [connectionId]);
      await ds.query("UPDATE sync_states SET next_check_at = now() - interval '60 minutes', interval_seconds = 10 WHERE connection_id = $1 AND resource = 'devices'", [rmm.id]);
      const cold = await store.claimNext(1);
      expect(cold.map((r) => `${r.connectionId}/${r.resource}`)).toEqual([`${connectionId}/companies`]);
      expect((await store.claimNext(1)).map((r) => `${r.connectionId}/${r.resource}`)).toEqual([`${rmm.id}/devices`]);
      // Within those 5 s, the shorter interval goes first: devices every 5 s (slack 2.5 s), due 61 min ago, before
      // the list (slack 5 s) due 2 s before them.
      await ds.query("UPDATE sync_states SET next_check_at = now() - interval '61 minutes 2 seconds', interval_seconds = 1800 WHERE connection_id = $1 AND resource = 'companies'", [connectionId]);
      await ds.query("UPDATE sync_states SET next_check_at = now() - interval '61 minutes', interval_seconds = 5 WHERE connection_id = $1 AND resource = 'devices'", [rmm.id]);
      const first = await store.claimNext(1);
      expect(first.map((r) => `${r.connectionId}/${r.resource}`)).toEqual([`${rmm.id}/devices`]);
      // Then the companies, with the connection's other due resources (its tickets, overdue by two hours).
      await ds.query("UPDATE sync_states SET next_check_at = now() - interval '2 hours' WHERE connection_id = $1 AND resource = 'tickets'", [connectionId]);
      const second = await store.claimNext(1);
      expect(second.map((r) => `${r.connectionId}/${r.resource}`).sort()).toEqual([`${connectionId}/companies`, `${connectionId}/tickets`]);
      // Claimed: not due again until the claim ends.
      expect((await store.claimNext(500)).filter((r) => [...first, ...second].some((c) => c.connectionId === r.connectionId && c.resource === r.resource))).toEqual([]);

      await ds.query("UPDATE sync_states SET next_check_at = now() - interval '1 hour'");
      const [{ n }] = await ds.query('SELECT count(*)::int AS n FROM sync_states');
      const [a, b] = await Promise.all([store.claimNext(n), store.claimNext(n)]);
      const claimed = [...a, ...b].map((r) => `${r.connectionId}/${r.resource}`);
      expect(new Set(claimed).size).toBe(claimed.length);
      expect(claimed.length).toBe(n);
    } finally {
      await ds.query("UPDATE sync_states SET next_check_at = now() + interval '1 hour'");
    }
  });

  it('a sweep reads the connections it claimed, with their states, in one statement, and their checks read none of their own', async () => {
    const ds = svc.services.ds;
    const tenants: string[] = [svc.alphaId, svc.betaId];
    const ids: string[] = (await ds.query('SELECT id FROM connections WHERE tenant_id = ANY($1::uuid[]) ORDER BY id', [tenants])).map((r: { id: string }) => r.id);
    expect(ids.length).toBeGreaterThanOrEqual(4);
    await ds.query("UPDATE sync_states SET next_check_at = now() + interval '1 hour'");
    await ds.query("UPDATE sync_states SET next_check_at = now() - interval '1 second' WHERE connection_id = ANY($1::uuid[]) AND resource IN ('tickets', 'devices', 'companies')", [ids]);
    const due: { id: string; connection_id: string; checked_at: Date | null }[] = await ds.query(
      'SELECT id, connection_id, checked_at FROM sync_states WHERE next_check_at <= now()');
    expect(new Set(due.map((d) => d.connection_id)).size).toBeGreaterThanOrEqual(4);
    const unchecked = async () => Number((await ds.query(
      `SELECT COUNT(*)::int AS n FROM sync_states s JOIN jsonb_to_recordset($1::jsonb) AS d(id uuid, checked_at timestamptz) ON d.id = s.id
       WHERE s.checked_at IS NOT DISTINCT FROM d.checked_at`,
      [JSON.stringify(due)]))[0].n);
    const statements: string[] = [];
    const logQuery = ds.logger.logQuery;
    ds.logger.logQuery = (query, parameters, runner) => { statements.push(query); return logQuery.call(ds.logger, query, parameters, runner); };
    const sweeper = new FreshnessSweeper(svc.services.sync, new SyncStatesStore(ds), svc.services.logger, 16, 20);
    let left = due.length;
    try {
      sweeper.start();
      for (let i = 0; i < 300 && left > 0; i++) { await new Promise((r) => setTimeout(r, 50)); left = await unchecked(); }
    } finally {
      await sweeper.stop();
      ds.logger.logQuery = logQuery;
      await ds.query("UPDATE sync_states SET next_check_at = now() + interval '1 hour'");
    }
    // Every due resource checked, all claimed by one sweep (none comes due again so soon), whose checks never
    // read their connection themselves.
    expect(left).toBe(0);
    expect(statements.filter((q) => /\bFROM ("\w+"\.)?"connections"/.test(q))).toHaveLength(1);
  });

  it('a worker starting removes the per-connection job schedulers an earlier version placed, and no other', async () => {
    const queue = svc.services.queue;
    await queue.upsertScheduler(`sync-${connectionId}`, 3_600_000, 'sync.connection', { tenantId: svc.alphaId, connectionId });
    await queue.upsertScheduler('other-schedule', 3_600_000, 'sync.connection', { tenantId: svc.alphaId, connectionId });
    try {
      await svc.services.syncJobs.scheduleAll();
      expect(await queue.schedulerIds()).toEqual(['other-schedule']);
    } finally {
      await queue.removeScheduler(`sync-${connectionId}`);
      await queue.removeScheduler('other-schedule');
    }
  });
});
