/**
 * GET /tenants/<t>/status (docs/architecture.md, Operations): per resource the records the store holds
 * (not what the last, possibly incremental, sync fetched), and per connection the running sync and
 * when the schedule syncs it next.
 */
import { startTestService, type TestService } from './support/service';

let svc: TestService;
const A = (p: string) => `/tenants/${svc.alphaId}${p}`;
const status = async () => (await svc.api(A('/status'))).body;
const connection = (body: any, kind: string) => body.connections.find((c: any) => c.kind === kind);

beforeAll(async () => {
  // A real schedule (the other tests turn it off): one sync an hour.
  svc = await startTestService({}, { env: { SYNC_INTERVAL_SECONDS: '3600' } });
}, 120_000);
afterAll(async () => { await svc?.close(); });

describe('tenant status', () => {
  it('counts the records the store holds, whatever the last sync fetched', async () => {
    // An incremental sync after a change fetches only what changed.
    const simulated = await svc.api('/sandbox/simulate', { method: 'POST', json: { tenant_id: svc.alphaId, change: { kind: 'ticket_note', text: 'Status check.' } } });
    expect(simulated.status).toBe(200);
    const body = await status();
    const psa = connection(body, 'psa');
    const tickets = psa.resources.find((r: any) => r.resource === 'tickets');
    const [{ n: stored }] = await svc.services.ds.query('SELECT count(*)::int AS n FROM tickets WHERE tenant_id = $1 AND connection_id = $2', [svc.alphaId, psa.id]);
    expect(stored).toBeGreaterThan(10);
    expect(tickets.records).toBe(stored);
    expect(tickets.last_fetched).toBeLessThan(stored);
    const devices = connection(body, 'rmm').resources.find((r: any) => r.resource === 'devices');
    const listed = (await svc.api(A('/devices?limit=500'))).body.devices.length;
    expect(devices.records).toBe(listed);
  });

  it('says when each connection syncs next on its schedule, and which sync is running now', async () => {
    const before = await status();
    for (const c of before.connections) {
      expect(c.sync.interval_seconds).toBe(3600);
      const next = Date.parse(c.sync.next_at);
      expect(next).toBeGreaterThan(Date.now());
      expect(next).toBeLessThanOrEqual(Date.now() + 3600_000);
    }
    const ninja = svc.services.simulators!.ninjaone.faults;
    ninja.setLatency(400);
    let sync: Promise<unknown> | null = null;
    try {
      const idle = connection(await status(), 'rmm');
      expect(idle.sync).toMatchObject({ running: false, running_since: null });
      sync = svc.api(A('/sync'), { method: 'POST', json: { full: true } });
      let seen: any = null;
      for (let i = 0; i < 100 && !seen; i++) {
        const rmm = connection(await status(), 'rmm');
        if (rmm.sync.running) seen = rmm;
        else await new Promise((r) => setTimeout(r, 50));
      }
      expect(seen).not.toBeNull();
      expect(Date.parse(seen.sync.running_since)).toBeLessThanOrEqual(Date.now());
    } finally {
      ninja.setLatency(0);
      await sync;
    }
    expect(connection(await status(), 'rmm').sync).toMatchObject({ running: false, running_since: null });
  }, 60_000);
});
