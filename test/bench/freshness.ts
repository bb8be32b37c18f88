/**
 * Freshness: an incremental sync of 50,000 ConnectWise tickets with 5,000 changed, events
 * written per second, with no added vendor latency and with 100 ms on every vendor answer (the note
 * counts of changed tickets run as many at once as the connection's budget admits); then the lag from
 * a change in each vendor's simulator to its event in the feed, with the scheduler running each
 * connection's freshness plan (src/sync/freshness.ts) at the connector's default budget.
 * The bench connection's budget is set high enough for both runs (100,000 an hour, 20 at once) so the
 * figures measure the sync, not the hourly window; the default ConnectWise budget is in capabilities.
 */
import type { RunningServer } from '../../src/server';
import { loadVendorFixtures } from '../../src/sandbox/fixtures';
import { FreshnessSweeper } from '../../src/sync/sweeper';
import { SyncStatesStore } from '../../src/sync/sync-states.store';
import { AUTOTASK_DEMO_INSTANCE, loadAutotaskDemoFixtures } from '../../src/simulators/autotask/demo-fixtures';

const TICKETS = Number(process.env.BENCH_FRESHNESS_TICKETS ?? 50_000);
const CHANGED = Number(process.env.BENCH_FRESHNESS_CHANGED ?? 5_000);
const LAG_SAMPLES = Number(process.env.BENCH_FRESHNESS_LAG_SAMPLES ?? 12);
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

  const lag = await benchLagAtDefaultBudgets(svc);
  return {
    'freshness: tickets / changed': `${tickets.length} / ${CHANGED}`,
    'freshness: events/s first incremental (re-reads 50k)': Math.round(first.written / first.seconds),
    'freshness: events/s (0 ms latency)': Math.round(fast.written / fast.seconds),
    'freshness: events (0 ms latency)': fast.written,
    'freshness: events/s (100 ms latency)': Math.round(slow.written / slow.seconds),
    'freshness: events (100 ms latency)': slow.written,
    ...lag,
  };
}

interface LagTarget {
  connector: string;
  connectionId: string;
  tenantId: string;
  /** Makes one change at the vendor; answers the vendor id its event names. */
  change(n: number): string;
}

/**
 * Change -> feed at default budgets: every PSA and RMM connector of the sandbox (and Autotask on its demo
 * database), each scheduled by its plan; changes at random moments, the feed polled as an ISV would.
 */
async function benchLagAtDefaultBudgets(svc: RunningServer): Promise<Record<string, string>> {
  const s = svc.services;
  const sims = s.simulators! as unknown as Record<string, any>;
  const key = svc.sandbox?.apiKey;
  if (!key) throw new Error('the lag part needs the sandbox (its tenants and ISV key)');
  const connections: { id: string; tenant_id: string; connector: string; slug: string }[] = await s.ds.query(
    "SELECT c.id, c.tenant_id, c.connector, t.slug FROM connections c JOIN tenants t ON t.id = c.tenant_id WHERE t.sandbox AND c.kind IN ('psa', 'rmm') ORDER BY t.slug, c.connector");
  const targets: LagTarget[] = [];
  const online = new Map<string, string[]>();
  for (const c of connections) {
    if (targets.some((t) => t.connector === c.connector)) continue;
    const sim = sims[c.connector];
    const base = { connector: c.connector, connectionId: c.id, tenantId: c.tenant_id };
    if (c.connector === 'connectwise' || c.connector === 'halopsa') {
      const ids = (sim.list(c.slug, 'tickets') as { id: number }[]).map((t) => t.id);
      targets.push({ ...base, change: (n) => { const id = ids[(n * 7) % ids.length]; sim.update(c.slug, 'tickets', id, { summary: `Lag sample ${n} ${Date.now()}` }); return String(id); } });
    } else if (sim?.simulate) {
      targets.push({ ...base, change: () => sim.simulate(c.slug, { kind: 'device_offline' }).target_id });
      online.set(c.connector, []);
    }
  }
  // Autotask: a tenant of its own on the simulator's demo database, at the connector's default budget.
  const at = sims.autotask;
  if (at) {
    const demo = loadAutotaskDemoFixtures();
    at.seed(AUTOTASK_DEMO_INSTANCE, demo.resources);
    const isv = (await s.ds.query("SELECT id FROM isvs WHERE name = 'Sandbox ISV'"))[0]?.id as string | undefined;
    const tenant = await s.admin.createTenant('Lag Autotask MSP', `lag-autotask-${Date.now()}`);
    const conn = await s.admin.createConnection({
      tenantId: tenant.id, kind: 'psa', connector: 'autotask',
      baseUrl: `${svc.url}/sandbox-vendors/autotask/atservicesrest/v1.0`,
      credentials: { username: 'sandbox', secret: 'sandbox-secret', integrationCode: 'SANDBOX' },
      statusMapping: demo.statusMapping,
    });
    if (isv) await s.admin.setGrant(isv, conn.id, ['psa.ticket.events']);
    await s.sync.syncConnection(conn.id);
    const ids = (at.list(AUTOTASK_DEMO_INSTANCE, 'Tickets') as { id: number }[]).map((t) => t.id);
    targets.push({ connector: 'autotask', connectionId: conn.id, tenantId: tenant.id, change: (n) => { const id = ids[(n * 7) % ids.length]; at.update(AUTOTASK_DEMO_INSTANCE, 'Tickets', id, { title: `Lag sample ${n} ${Date.now()}` }); return String(id); } });
  }
  await s.access.invalidate();
  // The service's own scheduled checks (the bench's service runs with SYNC_INTERVAL_SECONDS=0): every
  // resource of the store at its freshness plan, these connections' among them.
  const sweeper = new FreshnessSweeper(s.sync, new SyncStatesStore(s.ds), s.logger, s.config.syncConcurrency);
  sweeper.start();
  const out: Record<string, string> = {};
  await Promise.all(targets.map(async (t) => {
    const seen = new Set<string>();
    let cursor: string | null = null;
    const feed = async (): Promise<{ id: string; subject_ref: string }[]> => {
      const fresh: { id: string; subject_ref: string }[] = [];
      for (;;) {
        const res = await fetch(`${svc.url}/tenants/${t.tenantId}/connections/events?limit=500${cursor ? `&cursor=${cursor}` : ''}`, { headers: { 'x-api-key': key } });
        const body = (await res.json()) as { events?: { id: string; subject_ref: string; connection_id?: string }[]; next_cursor?: string | null };
        if (!body.events) throw new Error(`events feed answered ${res.status}: ${JSON.stringify(body)}`);
        for (const e of body.events) if (!seen.has(e.id)) { seen.add(e.id); fresh.push(e); }
        if (!body.next_cursor) return fresh;
        cursor = body.next_cursor;
      }
    };
    await feed();
    const lags: number[] = [];
    for (let n = 0; n < LAG_SAMPLES; n++) {
      await new Promise((r) => setTimeout(r, Math.random() * 10_000));
      const changedAt = Date.now();
      let target: string;
      try { target = t.change(n); } catch { break; } // no more records that can take the change (an RMM out of online devices)
      const deadline = changedAt + 60_000;
      let found = false;
      while (!found && Date.now() < deadline) {
        found = (await feed()).some((e) => e.subject_ref === target);
        if (!found) await new Promise((r) => setTimeout(r, 200));
      }
      lags.push(found ? Date.now() - changedAt : Infinity);
    }
    const [connection] = await s.ds.query('SELECT id, connector, settings FROM connections WHERE id = $1', [t.connectionId]);
    const budget = await s.budgets.snapshot(connection);
    lags.sort((a, b) => a - b);
    const at = (p: number) => lags[Math.min(lags.length - 1, Math.floor(p * lags.length))];
    const secs = (ms: number) => (Number.isFinite(ms) ? (ms / 1000).toFixed(1) : 'never');
    out[`freshness: change->feed lag p50/p95 s, ${t.connector} (p95<15)`] =
      `${secs(at(0.5))} / ${secs(at(0.95))} (${lags.length} changes; budget used ${budget.usedLastHour} of ${budget.requestsPerHour} an hour)`;
  })).finally(() => sweeper.stop());
  return Object.fromEntries(Object.entries(out).sort());
}
