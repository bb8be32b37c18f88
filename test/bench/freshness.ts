/**
 * Freshness: an incremental sync of 50,000 ConnectWise tickets with 5,000 changed, events
 * written per second, with no added vendor latency and with 100 ms on every vendor answer (the note
 * counts of changed tickets run as many at once as the connection's budget admits); then the lag from
 * a change in the simulator to its event in the feed with the scheduler running every 60 s.
 * The bench connection's budget is set high enough for both runs (100,000 an hour, 20 at once) so the
 * figures measure the sync, not the hourly window; the default ConnectWise budget is in capabilities.
 */
import type { RunningServer } from '../../src/server';
import { loadVendorFixtures } from '../../src/sandbox/fixtures';
import { SyncJobs } from '../../src/sync/sync-jobs';

const TICKETS = Number(process.env.BENCH_FRESHNESS_TICKETS ?? 50_000);
const CHANGED = Number(process.env.BENCH_FRESHNESS_CHANGED ?? 5_000);
const LAG_SAMPLES = Number(process.env.BENCH_FRESHNESS_LAG_SAMPLES ?? 3);
const INTERVAL_MS = 60_000;
const INSTANCE = 'freshness';

interface CwSim {
  seed: (i: string, f: Record<string, unknown[]>) => void;
  grow: (i: string, r: string, n: number) => void;
  list: (i: string, r: string) => { id: number; summary: string }[];
  update: (i: string, r: string, id: number, p: object) => void;
  faults: { setLatency: (ms: number) => void };
}

export async function benchFreshness(svc: RunningServer): Promise<Record<string, string | number>> {
  const s = svc.services;
  const cw = s.simulators!.connectwise as unknown as CwSim;
  const fixtures = loadVendorFixtures('sandbox-alpha', 'connectwise');
  cw.seed(INSTANCE, { ...fixtures.resources, tickets: [] });
  cw.grow(INSTANCE, 'tickets', TICKETS);
  const isv = await s.admin.createIsv('Freshness ISV');
  const { key } = await s.admin.issueApiKey(isv.id, 'freshness');
  const tenant = await s.admin.createTenant('Freshness MSP', `freshness-${Date.now()}`);
  const conn = await s.admin.createConnection({
    tenantId: tenant.id, kind: 'psa', connector: 'connectwise',
    baseUrl: `${svc.url}/sandbox-vendors/connectwise/v4_6_release/apis/3.0`,
    credentials: { companyId: INSTANCE, publicKey: 'sandbox-public', privateKey: 'sandbox-private', clientId: '00000000-0000-0000-0000-000000000000' },
    statusMapping: fixtures.statusMapping,
  });
  await s.ds.query(`UPDATE connections SET settings = settings || $2::jsonb WHERE id = $1`,
    [conn.id, JSON.stringify({ budget: { requests_per_hour: 100_000, concurrent: 20 } })]);
  await s.admin.setGrant(isv.id, conn.id, ['psa.ticket.events']);
  await s.sync.syncConnection(conn.id);
  const tickets = cw.list(INSTANCE, 'tickets');
  const countEvents = async () => Number((await s.ds.query('SELECT COUNT(*)::int AS n FROM events WHERE tenant_id = $1', [tenant.id]))[0].n);

  const incremental = async (round: number, latencyMs: number) => {
    const step = Math.max(1, Math.floor(tickets.length / CHANGED));
    for (let i = 0; i < CHANGED; i++) {
      const t = tickets[(i * step + round) % tickets.length];
      cw.update(INSTANCE, 'tickets', t.id, { summary: `${t.summary} (edit ${round})` });
    }
    cw.faults.setLatency(latencyMs);
    const before = await countEvents();
    const t0 = process.hrtime.bigint();
    await s.sync.syncConnection(conn.id, { resources: ['tickets'] });
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    cw.faults.setLatency(0);
    const written = (await countEvents()) - before;
    return { written, seconds };
  };
  // The first incremental re-reads every ticket stamped in the baseline's second (the watermark is
  // inclusive, and grow stamps all 50,000 alike): reported, then the measured rounds start from there.
  const first = await incremental(1, 0);
  await new Promise((r) => setTimeout(r, 1100));
  const fast = await incremental(2, 0);
  await new Promise((r) => setTimeout(r, 1100));
  const slow = await incremental(3, 100);

  // Lag: the scheduler syncs the connection every 60 s; each sample changes one ticket at a random
  // moment and waits for its event in the feed (polled over HTTP, as an ISV would).
  const jobs = new SyncJobs(s.ds, s.queue, () => INTERVAL_MS);
  await jobs.schedule(conn);
  // The feed is read page by page from the last cursor, as a poller keeps it (the last page is re-read until it fills).
  let cursor: string | null = null;
  const seenBefore = new Set<string>();
  const feed = async (): Promise<{ id: string; subject_ref: string }[]> => {
    const out: { id: string; subject_ref: string }[] = [];
    for (;;) {
      const res = await fetch(`${svc.url}/tenants/${tenant.id}/connections/events?kind=ticket&limit=500${cursor ? `&cursor=${cursor}` : ''}`, { headers: { 'x-api-key': key } });
      const body = (await res.json()) as { events?: { id: string; subject_ref: string }[]; next_cursor?: string | null };
      if (!body.events) throw new Error(`events feed answered ${res.status}: ${JSON.stringify(body)}`);
      out.push(...body.events.filter((e) => !seenBefore.has(e.id)));
      for (const e of body.events) seenBefore.add(e.id);
      if (!body.next_cursor) return out;
      cursor = body.next_cursor;
    }
  };
  await feed();
  const lags: number[] = [];
  for (let n = 0; n < LAG_SAMPLES; n++) {
    await new Promise((r) => setTimeout(r, Math.random() * 20_000));
    const t = tickets[n * 7];
    const changedAt = Date.now();
    cw.update(INSTANCE, 'tickets', t.id, { summary: `${t.summary} (lag ${n})` });
    const deadline = changedAt + 3 * INTERVAL_MS;
    let seen = false;
    while (!seen && Date.now() < deadline) {
      seen = (await feed()).some((e) => e.subject_ref === String(t.id));
      if (!seen) await new Promise((r) => setTimeout(r, 250));
    }
    lags.push(seen ? Date.now() - changedAt : NaN);
  }
  await s.queue.removeScheduler(`sync-${conn.id}`);
  const status = await (await fetch(`${svc.url}/tenants/${tenant.id}/status`, { headers: { 'x-api-key': key } })).json() as {
    connections: { budget?: { used_last_hour: number }; resources: { resource: string; lag_seconds: number | null }[] }[];
  };
  const sorted = [...lags].sort((a, b) => a - b);
  return {
    'freshness: tickets / changed': `${tickets.length} / ${CHANGED}`,
    'freshness: events/s first incremental (re-reads 50k)': Math.round(first.written / first.seconds),
    'freshness: events/s (0 ms latency)': Math.round(fast.written / fast.seconds),
    'freshness: events (0 ms latency)': fast.written,
    'freshness: events/s (100 ms latency)': Math.round(slow.written / slow.seconds),
    'freshness: events (100 ms latency)': slow.written,
    'freshness: change->feed lag s (60 s interval)': sorted.map((l) => (l / 1000).toFixed(1)).join(' / '),
    'freshness: budget used last hour': status.connections[0]?.budget?.used_last_hour ?? 'n/a',
  };
}
