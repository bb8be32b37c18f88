/**
 * Change detection, end to end: the MSP changes records in its PSA or RMM (the simulators' own UI
 * API), the tenant syncs over HTTP, and the events feed shows exactly the events those changes mean.
 */
import type { ConnectWiseSimulator } from '../src/simulators/connectwise/simulator';
import type { HaloPsaSimulator } from '../src/simulators/halopsa/simulator';
import type { NinjaOneSimulator } from '../src/simulators/ninjaone/simulator';
import { startTestService, type TestService } from './support/service';

let svc: TestService;
let cw: ConnectWiseSimulator;
let halo: HaloPsaSimulator;
let ninja: NinjaOneSimulator;
beforeAll(async () => {
  svc = await startTestService();
  cw = svc.services.simulators!.connectwise as ConnectWiseSimulator;
  halo = svc.services.simulators!.halopsa as HaloPsaSimulator;
  ninja = svc.services.simulators!.ninjaone as NinjaOneSimulator;
}, 120_000);
afterAll(async () => { await svc?.close(); });

/** Every event of the tenant the sandbox key sees, oldest first (all pages). */
async function feed(tenantId: string, kind?: string): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 50; pages++) {
    const q = new URLSearchParams({ limit: '500', ...(kind ? { kind } : {}), ...(cursor ? { cursor } : {}) });
    const res = await svc.api(`/tenants/${tenantId}/connections/events?${q}`);
    expect(res.status).toBe(200);
    out.push(...res.body.events);
    cursor = res.body.next_cursor;
    if (!cursor) return out;
  }
  throw new Error('feed did not end');
}

async function sync(tenantId: string, full = false): Promise<void> {
  const res = await svc.api(`/tenants/${tenantId}/sync`, { method: 'POST', json: { full } });
  expect(res.status).toBe(200);
  expect(res.body.ok).toBe(true);
}

/** The events that the MSP's change plus one sync produced. */
async function eventsOf(tenantId: string, change: () => unknown): Promise<any[]> {
  const seen = new Set((await feed(tenantId)).map((e) => e.id));
  await change();
  await sync(tenantId);
  return (await feed(tenantId)).filter((e) => !seen.has(e.id));
}

async function storedId(table: 'tickets' | 'devices' | 'companies', tenantId: string, sourceId: string | number): Promise<string> {
  const rows = await svc.services.ds.query(`SELECT id FROM ${table} WHERE tenant_id = $1 AND source_id = $2`, [tenantId, String(sourceId)]);
  expect(rows).toHaveLength(1);
  return rows[0].id;
}

const ALPHA = 'sandbox-alpha';
const BETA = 'sandbox-beta';

describe('the initial import', () => {
  it('writes no events: an initial import is not a change', async () => {
    expect(await feed(svc.alphaId)).toEqual([]);
    expect(await feed(svc.betaId)).toEqual([]);
  });
});

describe('ConnectWise tickets', () => {
  it('a status change gives exactly one ticket.updated with the previous and new status', async () => {
    const events = await eventsOf(svc.alphaId, () => cw.update(ALPHA, 'tickets', 30101, { status: { id: 2 } }));
    expect(events).toHaveLength(1);
    const [e] = events;
    expect(e).toMatchObject({
      kind: 'ticket.updated', type: null, previous_status: 'new', new_status: 'in_progress',
      tenant_id: svc.alphaId, vendor: 'connectwise', vendor_id: '30101', subject_ref: '30101',
      canonical_ticket_id: await storedId('tickets', svc.alphaId, 30101), canonical_device_id: null,
    });
    expect(e.id).toBe(e.event_id);
    expect(e.summary).toBe('Ticket 30101 moved from new to in_progress');
    expect(e.occurred_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
    expect(e.occurred_at.slice(0, 19)).toBe(cw.get(ALPHA, 'tickets', 30101)!._info.lastUpdated.slice(0, 19));
    expect(e.detail.changed).toEqual(expect.arrayContaining(['status', 'native_status']));
    expect(e.detail.changed).not.toContain('notes');
    expect(JSON.stringify(e.detail)).not.toContain('In Progress'); // names of fields, no payload
    expect(e.vendor_url).toContain('recordType=ServiceFV&recid=30101');
    const conn = (await svc.api(`/tenants/${svc.alphaId}/connections`)).body.connections.find((c: any) => c.connector === 'connectwise');
    expect(e.connection_id).toBe(conn.id);
  });

  it('a note added in the PSA gives exactly ticket.noted', async () => {
    const events = await eventsOf(svc.alphaId, () => cw.addNote(ALPHA, 30102, 'Called the customer, will visit on Monday.'));
    expect(events.map((e) => e.kind)).toEqual(['ticket.noted']);
    expect(events[0]).toMatchObject({ vendor_id: '30102', previous_status: 'new', new_status: 'new', summary: 'Note added to ticket 30102' });
    expect(events[0].detail.changed).toEqual(['notes']);
  });

  it('closing then reopening (two syncs) gives ticket.closed then ticket.reopened', async () => {
    const closed = await eventsOf(svc.alphaId, () => cw.update(ALPHA, 'tickets', 30103, { status: { id: 6 } }));
    expect(closed).toHaveLength(1);
    expect(closed[0]).toMatchObject({ kind: 'ticket.closed', previous_status: 'new', new_status: 'closed', summary: 'Ticket 30103 closed' });
    const reopened = await eventsOf(svc.alphaId, () => cw.update(ALPHA, 'tickets', 30103, { status: { id: 2 } }));
    expect(reopened).toHaveLength(1);
    expect(reopened[0]).toMatchObject({ kind: 'ticket.reopened', previous_status: 'closed', new_status: 'in_progress' });
    const all = await feed(svc.alphaId, 'ticket');
    const mine = all.filter((e) => e.vendor_id === '30103').map((e) => e.kind);
    expect(mine).toEqual(['ticket.closed', 'ticket.reopened']);
  });

  it('a ticket created in the PSA gives ticket.created', async () => {
    let id = 0;
    const events = await eventsOf(svc.alphaId, () => {
      id = cw.create(ALPHA, 'tickets', { summary: 'New starter needs a laptop', company: { id: 2 } }).id;
    });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      kind: 'ticket.created', vendor_id: String(id), previous_status: null, new_status: 'new',
      canonical_ticket_id: await storedId('tickets', svc.alphaId, id),
    });
  });

  it('a sync with nothing changed, the same sync again, and a forced full re-sync write no events', async () => {
    const events = await eventsOf(svc.alphaId, () => cw.update(ALPHA, 'tickets', 30104, { summary: 'Outlook keeps asking for the password' }));
    expect(events.map((e) => e.kind)).toEqual(['ticket.updated']);
    expect(events[0].detail.changed).toEqual(['summary']);
    const count = (await feed(svc.alphaId)).length;
    await sync(svc.alphaId);
    await sync(svc.alphaId, true);
    expect((await feed(svc.alphaId)).length).toBe(count);
  });

  it('two syncs racing over the same change write its event once', async () => {
    const seen = new Set((await feed(svc.alphaId)).map((e) => e.id));
    cw.update(ALPHA, 'tickets', 30105, { summary: 'VPN drops every 10 minutes' });
    const id = svc.alphaId;
    const [a, b] = await Promise.all([
      svc.api(`/tenants/${id}/sync`, { method: 'POST', json: { full: true } }),
      svc.api(`/tenants/${id}/sync`, { method: 'POST', json: {} }),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    const fresh = (await feed(id)).filter((e) => !seen.has(e.id));
    expect(fresh.filter((e) => e.vendor_id === '30105').map((e) => e.kind)).toEqual(['ticket.updated']);
  });
});

describe('ConnectWise companies', () => {
  it('a company renamed gives company.updated with our company id', async () => {
    const events = await eventsOf(svc.alphaId, () => cw.update(ALPHA, 'companies', 19291, { name: 'Contoso Holdings Ltd' }));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      kind: 'company.updated', vendor_id: '19291', canonical_company_id: await storedId('companies', svc.alphaId, 19291),
      summary: 'Company Contoso Ltd renamed to Contoso Holdings Ltd', canonical_ticket_id: null,
    });
    expect(events[0].detail.changed).toEqual(['name']);
  });
});

describe('NinjaOne devices', () => {
  it('a device going offline gives device.updated', async () => {
    const events = await eventsOf(svc.alphaId, () => ninja.update(ALPHA, 'devices', 102, { offline: true }));
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      kind: 'device.updated', vendor: 'ninjaone', vendor_id: '102', canonical_device_id: await storedId('devices', svc.alphaId, 102),
      summary: 'Device HVD-WS001 went offline', previous_status: null, new_status: null,
    });
    expect(events[0].detail.changed).toEqual(['online']);
    expect(events[0].vendor_url).toMatch(/#\/deviceDashboard\/102\/overview$/);
  });

  it('needing attention gives device.updated plus a health attention_needed row; clearing it gives resolved', async () => {
    let uid = '';
    const raised = await eventsOf(svc.alphaId, () => { uid = ninja.raiseAlert(ALPHA, 103, 'Disk C: below 5% free').uid; });
    const deviceId = await storedId('devices', svc.alphaId, 103);
    expect(raised.map((e) => [e.kind, e.type])).toEqual([['device.updated', null], ['health', 'attention_needed']]);
    expect(raised[1]).toMatchObject({ canonical_device_id: deviceId, vendor_id: '103', summary: 'Device HVD-WS002 needs attention' });

    const cleared = await eventsOf(svc.alphaId, () => expect(ninja.clearAlert(ALPHA, uid)).toBe(true));
    expect(cleared.map((e) => [e.kind, e.type])).toEqual([['device.updated', null], ['health', 'resolved']]);
    expect(cleared[1].canonical_device_id).toBe(deviceId);
    const health = await feed(svc.alphaId, 'health');
    expect(health.filter((e) => e.vendor_id === '103').map((e) => e.type)).toEqual(['attention_needed', 'resolved']);
  });

  it('an agent check-in alone (last contact) is not a change', async () => {
    const events = await eventsOf(svc.alphaId, () => ninja.update(ALPHA, 'devices', 104, { lastContact: Math.floor(Date.now() / 1000) }));
    expect(events).toEqual([]);
  });
});

describe('a change and its event', () => {
  it('are stored together: an event the store refuses leaves the record as it was, and the next sync stores both', async () => {
    const offline = async () => (await svc.services.ds.query(
      `SELECT raw->>'offline' AS offline FROM devices WHERE tenant_id = $1 AND source_id = '105'`, [svc.alphaId]))[0].offline;
    expect(await offline()).toBe('false');
    const seen = new Set((await feed(svc.alphaId)).map((e) => e.id));
    await svc.services.ds.query(`ALTER TABLE events ADD CONSTRAINT test_refuses_device_105 CHECK (vendor_id IS DISTINCT FROM '105')`);
    try {
      ninja.update(ALPHA, 'devices', 105, { offline: true });
      const refused = await svc.api(`/tenants/${svc.alphaId}/sync`, { method: 'POST', json: {} });
      expect(refused.status).toBe(200);
      expect(refused.body.ok).toBe(false);
      // Had the device been written without its event, no later sync would see a change to tell.
      expect(await offline()).toBe('false');
    } finally {
      await svc.services.ds.query('ALTER TABLE events DROP CONSTRAINT test_refuses_device_105');
    }
    await sync(svc.alphaId);
    expect(await offline()).toBe('true');
    const events = (await feed(svc.alphaId)).filter((e) => !seen.has(e.id));
    expect(events.map((e) => [e.kind, e.vendor_id])).toEqual([['device.updated', '105']]);
  });
});

describe('HaloPSA tickets (beta)', () => {
  it('a status change gives ticket.updated, an action (note) ticket.noted, closing ticket.closed', async () => {
    const updated = await eventsOf(svc.betaId, () => halo.update(BETA, 'tickets', 1001, { status_id: 2 }));
    expect(updated).toHaveLength(1);
    expect(updated[0]).toMatchObject({
      kind: 'ticket.updated', vendor: 'halopsa', vendor_id: '1001', previous_status: 'new', new_status: 'in_progress',
      canonical_ticket_id: await storedId('tickets', svc.betaId, 1001),
    });
    expect(updated[0].vendor_url).toMatch(/\/sandbox-vendors\/halopsa\/ticket\?id=1001$/);

    const noted = await eventsOf(svc.betaId, () => halo.addAction(BETA, 1001, 'Replaced the toner cartridge.'));
    expect(noted.map((e) => e.kind)).toEqual(['ticket.noted']);

    const closed = await eventsOf(svc.betaId, () => halo.addAction(BETA, 1001, { note: 'Done, closing.', new_status: 9 }));
    expect(closed).toHaveLength(1);
    expect(closed[0]).toMatchObject({ kind: 'ticket.closed', previous_status: 'in_progress', new_status: 'closed' });
    expect(closed[0].detail.changed).toEqual(expect.arrayContaining(['status', 'closed', 'notes']));
  });
});
