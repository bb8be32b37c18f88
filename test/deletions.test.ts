/**
 * Deletions (docs/architecture.md, Events and webhooks): a ticket and a device the MSP deletes at the vendor leave every list
 * after the next complete listing, with one `<family>.deleted` event each; a listing that fails midway
 * drops nothing.
 */
import type { ConnectWiseSimulator } from '../src/simulators/connectwise/simulator';
import type { NinjaOneSimulator } from '../src/simulators/ninjaone/simulator';
import { Connection } from '../entities';
import { startTestService, type TestService } from './support/service';
import { reactTo } from '../src/shared/committed-changes';

let svc: TestService;
let cw: ConnectWiseSimulator;
let ninja: NinjaOneSimulator;
beforeAll(async () => {
  svc = await startTestService();
  cw = svc.services.simulators!.connectwise as ConnectWiseSimulator;
  ninja = svc.services.simulators!.ninjaone as NinjaOneSimulator;
}, 120_000);
afterAll(async () => { await svc?.close(); });

const ALPHA = 'sandbox-alpha';

async function feed(kind: string): Promise<any[]> {
  const res = await svc.api(`/tenants/${svc.alphaId}/connections/events?limit=500&kind=${kind}`);
  expect(res.status).toBe(200);
  return res.body.events;
}
async function vendorIds(list: 'tickets' | 'devices'): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | null = null;
  do {
    const res = await svc.api(`/tenants/${svc.alphaId}/${list}?limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(res.status).toBe(200);
    for (const r of res.body[list]) out.push(String(r.source_id));
    cursor = res.body.next_cursor ?? null;
  } while (cursor);
  return out;
}
async function count(list: 'tickets' | 'devices'): Promise<number> {
  return (await vendorIds(list)).length;
}
async function sync(full: boolean) {
  return svc.api(`/tenants/${svc.alphaId}/sync`, { method: 'POST', json: { full } });
}

describe('a record deleted at the vendor', () => {
  it('a listing that fails midway drops nothing', async () => {
    const tickets = await count('tickets');
    expect(cw.remove(ALPHA, 'tickets', 30105)).toBe(true);
    cw.faults.inject({ status: 503, times: Infinity, pathIncludes: '/service/tickets', method: 'GET' });
    try {
      const res = await sync(true);
      expect(res.status).toBe(200);
      expect(res.body.ok).toBe(false);
    } finally {
      cw.faults.clear();
    }
    expect(await count('tickets')).toBe(tickets);
    expect(await feed('ticket.deleted')).toEqual([]);
  });

  it('leaves the lists after the next sync, with one event each', async () => {
    const tickets = await count('tickets');
    const devices = await count('devices');
    const deviceId = ninja.list(ALPHA, 'devices')[1].id;
    expect(ninja.remove(ALPHA, 'devices', deviceId)).toBe(true);
    const res = await sync(true);
    expect(res.body.ok).toBe(true);
    expect(await count('tickets')).toBe(tickets - 1);
    expect(await count('devices')).toBe(devices - 1);
    const ticketEvents = await feed('ticket.deleted');
    expect(ticketEvents).toHaveLength(1);
    expect(ticketEvents[0]).toMatchObject({ kind: 'ticket.deleted', vendor: 'connectwise', vendor_id: '30105', subject_ref: '30105' });
    expect(ticketEvents[0].canonical_ticket_id).toEqual(expect.any(String));
    const deviceEvents = await feed('device.deleted');
    expect(deviceEvents).toHaveLength(1);
    expect(deviceEvents[0]).toMatchObject({ kind: 'device.deleted', vendor_id: String(deviceId) });
    expect(await vendorIds('tickets')).not.toContain('30105');
    // Nothing else was dropped, and a repeated sync raises nothing more.
    expect((await sync(true)).body.ok).toBe(true);
    expect(await count('tickets')).toBe(tickets - 1);
    expect(await feed('ticket.deleted')).toHaveLength(1);
    expect(await feed('device.deleted')).toHaveLength(1);
  });

  it('a scheduled check of a list read whole finds a deletion, and a quiet check removes nothing', async () => {
    const [rmm] = await svc.services.ds.getRepository(Connection).findBy({ tenantId: svc.alphaId, connector: 'ninjaone' });
    const check = () => svc.services.sync.syncConnection(rmm.id, { claimed: new Set(['devices'] as const) });
    // Settled first: the scheduled re-read of a synced, unchanged list (the store holds it as fetched).
    expect((await check()).ok).toBe(true);
    const devices = await count('devices');
    const quiet = await check();
    expect(quiet.resources).toEqual([expect.objectContaining({ resource: 'devices', mode: 'full', created: 0, updated: 0, deleted: 0 })]);
    expect(await count('devices')).toBe(devices);
    // The rest of the listing is as stored, so only what is stored beside it tells the deletion.
    const gone = ninja.list(ALPHA, 'devices')[0].id;
    expect(ninja.remove(ALPHA, 'devices', gone)).toBe(true);
    const found = await check();
    expect(found.resources).toEqual([expect.objectContaining({ resource: 'devices', created: 0, updated: 0, deleted: 1 })]);
    expect(await vendorIds('devices')).not.toContain(String(gone));
    expect(await count('devices')).toBe(devices - 1);
    expect((await feed('device.deleted')).map((e) => e.vendor_id)).toContain(String(gone));
  });

  it('a check whose listing is the one last found as stored reads nothing of the store, and still finds every change', async () => {
    const [rmm] = await svc.services.ds.getRepository(Connection).findBy({ tenantId: svc.alphaId, connector: 'ninjaone' });
    const check = () => svc.services.sync.syncConnection(rmm.id, { claimed: new Set(['devices'] as const) });
    const recorded = async (): Promise<string | null> => (await svc.services.ds.query(
      "SELECT quiet_listing FROM sync_states WHERE connection_id = $1 AND resource = 'devices'", [rmm.id]))[0].quiet_listing;
    const storedHash = async (id: number): Promise<string> => (await svc.services.ds.query(
      'SELECT raw_hash FROM devices WHERE connection_id = $1 AND source_id = $2', [rmm.id, String(id)]))[0].raw_hash;
    // Quiet checks until one finds every record settled (a record stamped in the last seconds is not yet).
    for (let i = 0; i < 5 && (await recorded()) === null; i++) {
      expect((await check()).ok).toBe(true);
      if ((await recorded()) === null) await new Promise((r) => setTimeout(r, 1000));
    }
    expect(await recorded()).toEqual(expect.any(String));

    // The recorded listing stands for the store: a check that matches it does not read the store, so a row
    // altered behind the sync's back stays as it is (the only way to see that nothing was read).
    const [first, second] = ninja.list(ALPHA, 'devices');
    const hash = await storedHash(first.id);
    await svc.services.ds.query('UPDATE devices SET raw_hash = $3 WHERE connection_id = $1 AND source_id = $2', [rmm.id, String(first.id), 'altered']);
    expect((await check()).resources).toEqual([expect.objectContaining({ resource: 'devices', created: 0, updated: 0, deleted: 0 })]);
    expect(await storedHash(first.id)).toBe('altered');
    await svc.services.ds.query('UPDATE devices SET raw_hash = $3 WHERE connection_id = $1 AND source_id = $2', [rmm.id, String(first.id), hash]);

    // A write forgets the recorded listing in its own transaction: a sync that dies after its page committed
    // leaves nothing that would vouch for the store.
    let seenInTransaction: (string | null)[] = [];
    let watching = true;
    svc.services.changes.subscribe(reactTo('records.page_written', 'test: quiet listing seen in the transaction', {
      written: async (manager, scope) => {
        if (!watching || scope.connection.id !== rmm.id) return;
        seenInTransaction.push((await manager.query("SELECT quiet_listing FROM sync_states WHERE connection_id = $1 AND resource = 'devices'", [rmm.id]))[0].quiet_listing);
      },
    }));
    try {
      ninja.update(ALPHA, 'devices', second.id, { offline: !second.offline });
      const edited = await check();
      expect(edited.resources).toEqual([expect.objectContaining({ resource: 'devices', updated: 1 })]);
      expect(seenInTransaction).toEqual([null]);
      expect((await feed('device.updated')).map((e) => e.vendor_id)).toContain(String(second.id));
      // A device added and one removed at the vendor: each found, whatever was recorded before.
      for (let i = 0; i < 5 && (await recorded()) === null; i++) { await new Promise((r) => setTimeout(r, 1000)); await check(); }
      expect(await recorded()).toEqual(expect.any(String));
      seenInTransaction = [];
      expect(ninja.remove(ALPHA, 'devices', second.id)).toBe(true);
      expect((await check()).resources).toEqual([expect.objectContaining({ resource: 'devices', created: 0, updated: 0, deleted: 1 })]);
      expect(seenInTransaction).toEqual([null]);
      expect(await vendorIds('devices')).not.toContain(String(second.id));
    } finally {
      watching = false;
    }
  });

  it('an incremental sync finds a deletion with its periodic id scan, and a company deletion raises company.deleted', async () => {
    const before = await count('tickets');
    expect(cw.remove(ALPHA, 'tickets', 30106)).toBe(true);
    const company = cw.list(ALPHA, 'companies').find((c) => !cw.list(ALPHA, 'tickets').some((t) => t.company?.id === c.id))
      ?? cw.list(ALPHA, 'companies').at(-1)!;
    expect(cw.remove(ALPHA, 'companies', company.id)).toBe(true);
    // The scan interval has passed (setup: the scanner forgets its last scans).
    svc.services.sync.deletions.forget();
    const res = await sync(false);
    expect(res.body.ok).toBe(true);
    const psa = res.body.connections.find((c: any) => c.connector === 'connectwise');
    expect(psa.resources.find((r: any) => r.resource === 'tickets')).toMatchObject({ mode: 'incremental', deleted: 1 });
    expect(await count('tickets')).toBe(before - 1);
    expect((await feed('ticket.deleted')).map((e) => e.vendor_id)).toEqual(['30105', '30106']);
    expect((await feed('company.deleted')).map((e) => e.vendor_id)).toEqual([String(company.id)]);
    // Identity reads still answer with the company gone (nothing referenced its row by key).
    for (const p of ['identity/mappings', 'identity/unmapped', 'identity/book']) {
      const r = await svc.api(`/tenants/${svc.alphaId}/${p}`);
      expect({ p, status: r.status }).toEqual({ p, status: 200 });
      expect(JSON.stringify(r.body)).not.toContain(`"source_id":"${company.id}"`);
    }
  });
});
