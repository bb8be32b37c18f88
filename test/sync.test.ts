/**
 * Sync over real HTTP against every simulator: vendor credentials encrypted at rest, injected 429
 * with Retry-After and bursts of 503 ridden out, incremental runs fetching only what changed, and a
 * failed sync recorded in `status` while the last good data stays served.
 */
import { SecretBox } from '../src/security/secret-box';
import { startTestService, type TestService } from './support/service';

let svc: TestService;
beforeAll(async () => { svc = await startTestService(); }, 120_000);
afterAll(async () => { await svc?.close(); });

async function injectFault(vendor: string, fault: Record<string, unknown>) {
  const res = await fetch(`${svc.url}/sandbox-vendors/${vendor}/_control/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.config.adminToken}` },
    body: JSON.stringify(fault),
  });
  expect(res.status).toBe(204);
}
async function clearFaults(vendor: string) {
  await fetch(`${svc.url}/sandbox-vendors/${vendor}/_control/faults`, { method: 'DELETE', headers: { authorization: `Bearer ${svc.config.adminToken}` } });
}

/** The MSP edits a ConnectWise ticket's summary in its PSA, over the vendor's own API. */
async function mspEditsSummary(sourceId: string, summary: string) {
  const auth = 'Basic ' + Buffer.from('sandbox+sandbox-public:sandbox-private').toString('base64');
  const patch = await fetch(`${svc.url}/sandbox-vendors/connectwise/v4_6_release/apis/3.0/service/tickets/${sourceId}`, {
    method: 'PATCH',
    headers: { authorization: auth, clientId: '00000000-0000-0000-0000-000000000000', 'content-type': 'application/json' },
    body: JSON.stringify([{ op: 'replace', path: 'summary', value: summary }]),
  });
  expect(patch.status).toBe(200);
}

describe('vendor credentials at rest', () => {
  it('are AES-256-GCM sealed: no plaintext in the column, a fresh IV per value, and they open with the key', async () => {
    const rows: { connector: string; credentials_encrypted: string }[] =
      await svc.services.ds.query('SELECT connector, credentials_encrypted FROM connections');
    expect(rows.length).toBe(7); // alpha three, beta three (HaloPSA, NinjaOne, Datto RMM), gamma one (Kaseya BMS)
    for (const r of rows) {
      expect(r.credentials_encrypted).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
      expect(r.credentials_encrypted).not.toMatch(/sandbox-secret|sandbox-private|sandbox-public/);
    }
    // alpha's and beta's NinjaOne credentials share a secret, yet their ciphertexts share nothing.
    const ninja = rows.filter((r) => r.connector === 'ninjaone').map((r) => r.credentials_encrypted);
    expect(ninja[0].split('.')[1]).not.toBe(ninja[1].split('.')[1]);
    const box = new SecretBox(svc.config.encryptionKey);
    expect(box.openJson<Record<string, string>>(ninja[0]).clientSecret).toBe('sandbox-secret');
    const wrong = new SecretBox(Buffer.alloc(32, 7));
    expect(() => wrong.open(ninja[0])).toThrow();
  });
});

describe.each([
  ['connectwise', () => svc.alphaId],
  ['ninjaone', () => svc.alphaId],
  ['pax8', () => svc.alphaId],
  ['halopsa', () => svc.betaId],
  ['kaseyabms', () => svc.gammaId],
])('sync against the %s simulator', (vendor, tenant) => {
  afterEach(() => clearFaults(vendor));

  it('rides out a 429 with Retry-After, waiting as long as the vendor asked', async () => {
    const sim = svc.services.simulators![vendor as 'connectwise'];
    sim.faults.resetLog();
    await injectFault(vendor, { status: 429, times: 1, retryAfterSeconds: 1 });
    const res = await svc.api(`/tenants/${tenant()}/sync`, { method: 'POST', json: {} });
    expect(res.status).toBe(200);
    const mine = res.body.connections.find((c: any) => c.connector === vendor);
    expect(mine).toMatchObject({ ok: true, error: null });
    // The throttled request and its retry: the retry came no sooner than Retry-After.
    const [first, second] = sim.faults.requests.filter((r) => !r.path.startsWith('/_control'));
    expect(second.path).toBe(first.path);
    expect(second.at - first.at).toBeGreaterThanOrEqual(950);
  });

  it('rides out a burst of three 503s', async () => {
    await injectFault(vendor, { status: 503, times: 3 });
    const res = await svc.api(`/tenants/${tenant()}/sync`, { method: 'POST', json: {} });
    expect(res.body.connections.find((c: any) => c.connector === vendor)).toMatchObject({ ok: true });
  });
});

describe('incremental sync', () => {
  it('after the first run, fetches only the tickets the MSP changed', async () => {
    const before = await svc.api(`/tenants/${svc.alphaId}/tickets?limit=500`);
    const target = before.body.tickets.find((t: any) => t.source === 'connectwise' && t.record_type === 'ServiceTicket');
    await mspEditsSummary(target.source_id, 'Printer on floor 3 jams again');

    const res = await svc.api(`/tenants/${svc.alphaId}/sync`, { method: 'POST', json: {} });
    const psa = res.body.connections.find((c: any) => c.connector === 'connectwise');
    const tickets = psa.resources.find((r: any) => r.resource === 'tickets');
    expect(tickets.mode).toBe('incremental');
    expect(tickets.fetched).toBeLessThanOrEqual(2); // the changed one (and the watermark's own at most)
    expect(tickets.updated).toBe(1);
    expect(tickets.created).toBe(0);

    const after = await svc.api(`/tenants/${svc.alphaId}/tickets?limit=500`);
    const changed = after.body.tickets.find((t: any) => t.id === target.id);
    expect(changed.summary).toBe('Printer on floor 3 jams again');
    expect(changed.raw.summary).toBe('Printer on floor 3 jams again');
    expect(after.body.tickets).toHaveLength(before.body.tickets.length);
  });

  it('a run with nothing changed writes nothing', async () => {
    const res = await svc.api(`/tenants/${svc.alphaId}/sync`, { method: 'POST', json: {} });
    for (const c of res.body.connections) {
      for (const r of c.resources) {
        expect({ c: c.connector, r: r.resource, created: r.created, updated: r.updated }).toEqual({ c: c.connector, r: r.resource, created: 0, updated: 0 });
      }
    }
  });
});

describe('a failed sync', () => {
  it('is recorded in status and audit while the last good data stays served', async () => {
    const before = await svc.api(`/tenants/${svc.alphaId}/tickets?limit=500`);
    await injectFault('connectwise', { status: 503, times: 1000, pathIncludes: '/service/tickets' });
    try {
      const res = await svc.api(`/tenants/${svc.alphaId}/sync`, { method: 'POST', json: {} });
      expect(res.status).toBe(200);
      expect(res.body.ok).toBe(false);
      const psa = res.body.connections.find((c: any) => c.connector === 'connectwise');
      expect(psa.ok).toBe(false);
      expect(psa.error).toMatch(/503/);

      const status = await svc.api(`/tenants/${svc.alphaId}/status`);
      expect(status.body.healthy).toBe(false);
      const cw = status.body.connections.find((c: any) => c.connector === 'connectwise');
      expect(cw.sync_status).toBe('failed');
      expect(cw.resources.find((r: any) => r.resource === 'tickets')).toMatchObject({ last_status: 'failed', last_error: expect.stringMatching(/503/) });

      const audit = await svc.api(`/tenants/${svc.alphaId}/audit?limit=20`);
      expect(audit.body.audit.some((e: any) => e.action === 'sync.failed' && e.outcome === 'failed')).toBe(true);

      const after = await svc.api(`/tenants/${svc.alphaId}/tickets?limit=500`);
      expect(after.status).toBe(200);
      expect(after.body.tickets.map((t: any) => t.id)).toEqual(before.body.tickets.map((t: any) => t.id));
    } finally {
      await clearFaults('connectwise');
    }
    const healed = await svc.api(`/tenants/${svc.alphaId}/sync`, { method: 'POST', json: {} });
    expect(healed.body.ok).toBe(true);
    expect((await svc.api(`/tenants/${svc.alphaId}/status`)).body.healthy).toBe(true);
  });
});

describe('syncs asked for while the same one runs', () => {
  it('run one at a time: a burst of refreshes during one costs one more read after it, which sees what changed meanwhile', async () => {
    const sim = svc.services.simulators!.connectwise;
    const connectionId: string = (await svc.services.ds.query(
      "SELECT id FROM connections WHERE tenant_id = $1 AND connector = 'connectwise'", [svc.alphaId]))[0].id;
    const refresh = () => svc.services.sync.syncConnection(connectionId, { resources: ['tickets'] });
    const ticketReads = () => sim.faults.requests.filter((r) => r.method === 'GET' && /\/tickets$/.test(r.path)).length;
    await refresh();
    sim.faults.resetLog();
    await refresh();
    const oneRun = ticketReads();
    expect(oneRun).toBeGreaterThan(0);

    // Each vendor call held 300 ms, so the first run is surely still reading when the burst is asked for, on a
    // loaded machine too (at 100 ms, under CI's load, the first run could end while the burst was being taken).
    sim.faults.setLatency(300);
    try {
      sim.faults.resetLog();
      const first = refresh();
      // The MSP edits a ticket while the first read is under way; then five more refreshes are asked for.
      await new Promise((r) => setTimeout(r, 30));
      const before = await svc.api(`/tenants/${svc.alphaId}/tickets?limit=500`);
      const target = before.body.tickets.find((t: any) => t.source === 'connectwise' && t.record_type === 'ServiceTicket');
      await mspEditsSummary(target.source_id, 'Changed while a refresh ran');
      const burst = Array.from({ length: 5 }, refresh);
      const reports = await Promise.all([first, ...burst]);
      expect(reports.every((r) => r.ok)).toBe(true);
      // Two reads of the list, one after the other, where six side by side would have been six.
      expect(ticketReads()).toBe(2 * oneRun);
      // The five share the run after the first, and it read the edit.
      expect(new Set(burst.map((_, i) => reports[i + 1])).size).toBe(1);
      const after = await svc.api(`/tenants/${svc.alphaId}/tickets?limit=500`);
      expect(after.body.tickets.find((t: any) => t.id === target.id).summary).toBe('Changed while a refresh ran');
    } finally {
      sim.faults.clear();
    }
  });
});
