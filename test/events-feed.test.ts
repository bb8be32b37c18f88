/**
 * The events feed over HTTP: the kind filter (exact, family, absent), grants (grant_missing with
 * `needed`; absent kind shows only granted kinds), cursors that neither skip nor repeat while syncs
 * keep writing events, and sandbox_reset.
 */
import type { ConnectWiseSimulator } from '../src/simulators/connectwise/simulator';
import type { HaloPsaSimulator } from '../src/simulators/halopsa/simulator';
import type { NinjaOneSimulator } from '../src/simulators/ninjaone/simulator';
import type { EventDraft } from '../src/events/change-detector';
import { runtime } from './support/runtime';
import { startTestService, type TestService } from './support/service';

const ALPHA = 'sandbox-alpha';
const BETA = 'sandbox-beta';

let svc: TestService;
let cw: ConnectWiseSimulator;
let ninja: NinjaOneSimulator;
let halo: HaloPsaSimulator;

async function sync(tenantId: string): Promise<void> {
  const res = await svc.api(`/tenants/${tenantId}/sync`, { method: 'POST', json: {} });
  expect(res.body.ok).toBe(true);
}

beforeAll(async () => {
  svc = await startTestService();
  cw = svc.services.simulators!.connectwise as ConnectWiseSimulator;
  ninja = svc.services.simulators!.ninjaone as NinjaOneSimulator;
  halo = svc.services.simulators!.halopsa as HaloPsaSimulator;
  // One change of each family on alpha, and a ticket and a company change on beta.
  cw.update(ALPHA, 'tickets', 30106, { summary: 'Laptop battery swells, needs replacing' });
  cw.addNote(ALPHA, 30107, 'Ordered a replacement dock.');
  cw.update(ALPHA, 'companies', 2, { name: 'Bluepeak Managed IT Services' });
  ninja.update(ALPHA, 'devices', 105, { offline: true });
  ninja.raiseAlert(ALPHA, 106, 'CPU above 95% for 15 minutes');
  halo.update(BETA, 'tickets', 1002, { status_id: 4 });
  halo.update(BETA, 'clients', 12, { name: 'Harbourside Dental Group Pty' });
  await sync(svc.alphaId);
  await sync(svc.betaId);
}, 120_000);
afterAll(async () => { await svc?.close(); });

const path = (tenantId: string, q: Record<string, string> = {}) =>
  `/tenants/${tenantId}/connections/events${Object.keys(q).length ? `?${new URLSearchParams(q)}` : ''}`;

/** Every page of the feed, following next_cursor. */
async function feed(tenantId: string, q: Record<string, string> = {}, key?: string): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 200; pages++) {
    const res = await svc.api(path(tenantId, { ...q, ...(cursor ? { cursor } : {}) }), key ? { key } : {});
    expect(res.status).toBe(200);
    expect(res.body.sandbox).toBe(true);
    out.push(...res.body.events);
    cursor = res.body.next_cursor;
    if (!cursor) return out;
  }
  throw new Error('feed did not end');
}

const kinds = (events: any[]) => [...new Set(events.map((e) => e.kind))].sort();

describe('the kind filter', () => {
  it('absent: every kind the key is granted, oldest first, with the documented Event fields and our position only', async () => {
    const all = await feed(svc.alphaId);
    expect(kinds(all)).toEqual(['company.updated', 'device.updated', 'health', 'ticket.noted', 'ticket.updated']);
    expect(Object.keys(all[0]).sort()).toEqual([
      'actor', 'canonical_company_id', 'canonical_device_id', 'canonical_ticket_id', 'connection_id', 'detail', 'event_id', 'id',
      'incident_id', 'kind', 'new_status', 'occurred_at', 'position', 'previous_status', 'subject_ref', 'summary', 'tenant_id', 'type',
      'vendor', 'vendor_id', 'vendor_url',
    ]);
    // In sync order: a connection's resources in their order, a page's records in page order.
    const order = (e: any) => all.indexOf(e);
    const of = (kind: string, id: string) => all.find((e) => e.kind === kind && e.vendor_id === id);
    expect(order(of('company.updated', '2'))).toBeLessThan(order(of('ticket.updated', '30106')));
    expect(order(of('ticket.updated', '30106'))).toBeLessThan(order(of('ticket.noted', '30107')));
    expect(order(of('device.updated', '106'))).toBeLessThan(order(of('health', '106')));
    expect(all).toHaveLength(6);
  });

  it('an exact kind, or a family', async () => {
    expect((await feed(svc.alphaId, { kind: 'ticket.noted' })).map((e) => e.vendor_id)).toEqual(['30107']);
    expect(kinds(await feed(svc.alphaId, { kind: 'ticket' }))).toEqual(['ticket.noted', 'ticket.updated']);
    expect((await feed(svc.alphaId, { kind: 'device' })).map((e) => e.vendor_id).sort()).toEqual(['105', '106']);
    expect((await feed(svc.alphaId, { kind: 'health' })).map((e) => [e.type, e.vendor_id])).toEqual([['attention_needed', '106']]);
    expect((await feed(svc.alphaId, { kind: 'company.updated' })).map((e) => e.vendor_id)).toEqual(['2']);
    expect(await feed(svc.alphaId, { kind: 'ticket.closed' })).toEqual([]);
  });

  it('the graph query answers the same', async () => {
    const res = await svc.graphql('query($t: ID!) { list_events(tenant_id: $t, kind: "ticket", limit: 10) { events { id kind } sandbox next_cursor } }', { t: svc.alphaId });
    expect(res.data.list_events.events.map((e: any) => e.kind).sort()).toEqual(['ticket.noted', 'ticket.updated']);
    expect(res.data.list_events.next_cursor).toBeNull();
  });

  it('an unknown kind, a bad cursor or limit is a 422 validation error', async () => {
    for (const q of <Record<string, string>[]>[{ kind: 'ticket.vanished' }, { kind: 'tickets' }, { cursor: 'not-ours!' }, { cursor: 'YWJj' }, { limit: '0' }, { since: 'x' }]) {
      const res = await svc.api(path(svc.alphaId, q));
      expect({ q, status: res.status }).toEqual({ q, status: 422 });
      expect(Array.isArray(res.body.detail)).toBe(true);
    }
  });
});

describe('grants', () => {
  it('sandbox-beta lacks psa.company.events: company kinds give grant_missing, absent kind leaves them out', async () => {
    for (const kind of ['company', 'company.updated', 'company.created']) {
      const res = await svc.api(path(svc.betaId, { kind }));
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 'grant_missing', needed: 'psa.company.events', details: { needed: 'psa.company.events' } });
    }
    const visible = await feed(svc.betaId);
    expect(kinds(visible)).toEqual(['ticket.updated']);
    // The event exists: the admin sees it.
    const admin = await svc.graphql('query($t: ID!) { list_events(tenant_id: $t, kind: "company") { events { kind vendor_id } } }', { t: svc.betaId });
    expect(admin.data.list_events.events).toEqual([{ kind: 'company.updated', vendor_id: '12' }]);
  });

  it('a key granted no event kinds gets grant_missing for each, and only sandbox_reset without kind', async () => {
    const isv = (await svc.graphql('mutation { create_isv(name: "Quiet ISV") { id } }')).data.create_isv.id;
    const key = (await svc.graphql('mutation($i: ID!) { issue_api_key(isv_id: $i, label: "t") { key } }', { i: isv })).data.issue_api_key.key;
    const connections = (await svc.api(`/tenants/${svc.alphaId}/connections`)).body.connections as { id: string; connector: string; kind: string }[];
    const grant = async (connector: string, keys: string[]) => {
      const c = connections.find((x) => x.connector === connector)!;
      const r = await svc.graphql('mutation($i: ID!, $c: ID!, $k: [String!]!) { set_grant(isv_id: $i, connection_id: $c, keys: $k) { id } }', { i: isv, c: c.id, k: keys });
      expect(r.errors).toBeUndefined();
    };
    // A key of no event kind, where its connection takes it: the tenant is visible, no feed kind is granted.
    for (const c of connections) await grant(c.connector, c.kind === 'psa' ? ['psa.ticket.create'] : c.kind === 'rmm' ? [] : ['distributor.company.create']);

    const needed: Record<string, string> = {
      ticket: 'psa.ticket.events', 'ticket.created': 'psa.ticket.events', 'ticket.updated': 'psa.ticket.events',
      'ticket.noted': 'psa.ticket.events', 'ticket.closed': 'psa.ticket.events', 'ticket.reopened': 'psa.ticket.events',
      device: 'rmm.device.events', 'device.created': 'rmm.device.events', 'device.updated': 'rmm.device.events',
      company: 'psa.company.events', 'company.created': 'psa.company.events', 'company.updated': 'psa.company.events',
      health: 'rmm.device.events',
    };
    for (const [kind, grantKey] of Object.entries(needed)) {
      const res = await svc.api(path(svc.alphaId, { kind }), { key });
      expect({ kind, status: res.status, code: res.body.code, needed: res.body.needed }).toEqual({ kind, status: 403, code: 'grant_missing', needed: grantKey });
    }
    expect(await feed(svc.alphaId, {}, key)).toEqual([]);
    expect(await feed(svc.alphaId, { kind: 'sandbox_reset' }, key)).toEqual([]);

    // The device grant on the RMM connection only: device kinds and device health, nothing else.
    await grant('ninjaone', ['rmm.device.events']);
    expect(kinds(await feed(svc.alphaId, {}, key))).toEqual(['device.updated', 'health']);
    expect((await feed(svc.alphaId, { kind: 'health' }, key)).map((e) => e.vendor_id)).toEqual(['106']);
    expect((await svc.api(path(svc.alphaId, { kind: 'ticket' }), { key })).body.needed).toBe('psa.ticket.events');
    // A ticket grant on the RMM connection is not offered there (422), so it cannot show the PSA connection's tickets.
    const rmm = connections.find((x) => x.kind === 'rmm')!;
    const misplaced = await svc.graphql('mutation($i: ID!, $c: ID!, $k: [String!]!) { set_grant(isv_id: $i, connection_id: $c, keys: $k) { id } }', { i: isv, c: rmm.id, k: ['rmm.device.events', 'psa.ticket.events'] });
    expect(misplaced.errors?.[0]?.extensions).toMatchObject({ code: 'request_invalid', status: 422, details: { refused: ['psa.ticket.events'] } });
    expect((await svc.api(path(svc.alphaId, { kind: 'ticket' }), { key })).body.needed).toBe('psa.ticket.events');
  });

  it('a tenant the key cannot see is 404, as for any read', async () => {
    const res = await svc.api(path('00000000-0000-4000-8000-000000000000'));
    expect(res.status).toBe(404);
  });
});

describe('cursor pagination', () => {
  it('pages are complete and disjoint while syncs keep writing events', async () => {
    let writing = true;
    const writer = (async () => {
      try {
        for (let i = 0; i < 4; i++) {
          for (const id of [30108, 30109, 30110]) cw.update(ALPHA, 'tickets', id, { summary: `Follow-up ${i} on ticket ${id}` });
          ninja.update(ALPHA, 'devices', 107, { offline: i % 2 === 1 }); // starts offline
          await sync(svc.alphaId);
        }
      } finally {
        writing = false;
      }
    })();

    const passes: string[][] = [];
    for (let pass = 0; pass < 40 && (writing || passes.length === 0); pass++) {
      const ids: string[] = [];
      let cursor: string | null = null;
      for (let page = 0; page < 200; page++) {
        const res = await svc.api(path(svc.alphaId, { limit: '2', ...(cursor ? { cursor } : {}) }));
        expect(res.status).toBe(200);
        expect(res.body.events.length).toBeLessThanOrEqual(2);
        ids.push(...res.body.events.map((e: any) => e.id));
        cursor = res.body.next_cursor;
        if (!cursor) break;
      }
      expect(cursor).toBeNull();
      passes.push(ids);
    }
    await writer;

    const final = (await feed(svc.alphaId)).map((e) => e.id);
    expect(new Set(final).size).toBe(final.length);
    expect(final.length).toBeGreaterThanOrEqual(6 + 4 * 4); // the setup's events and 4 per round
    // Every pass read while events were being written is exactly the start of the final feed:
    // nothing skipped (a late commit would show up before the end of an earlier pass), nothing twice.
    for (const ids of passes) expect(ids).toEqual(final.slice(0, ids.length));
    expect(passes.length).toBeGreaterThan(1);
  });
});

/** A hand-made event, as another writer of the feed would insert it. */
function draft(note: string): EventDraft {
  return {
    connectionId: null, kind: 'ticket.updated', type: null, dedupeKey: `test:${note}:${Math.random()}`, occurredAt: new Date(),
    actor: null, summary: note, subjectRef: null, incidentId: null, canonicalTicketId: null, canonicalDeviceId: null,
    canonicalCompanyId: null, previousStatus: null, newStatus: null, vendor: null, vendorId: null,
    vendorUrl: null, detail: {},
  };
}

describe('feed order', () => {
  // PGlite is one session: two event transactions of a tenant cannot overlap there at all.
  (runtime.databaseUrl ? it : it.skip)('an event transaction waits for an earlier one of the tenant, so seqs commit in order', async () => {
  const { ds, events } = svc.services;
  const first = ds.createQueryRunner();
  await first.connect();
  await first.startTransaction();
  let second: Promise<string[]> | undefined;
  try {
    const [a] = await events.insert(first.manager, svc.alphaId, [draft('first')]);
    second = ds.transaction((m) => events.insert(m, svc.alphaId, [draft('second')]));
    // The second one is parked on the tenant's feed lock (it has not taken a seq yet).
    let waiting = 0;
    for (let i = 0; i < 200 && waiting === 0; i++) {
      waiting = Number((await ds.query("SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"))[0].n);
      if (waiting === 0) await new Promise((r) => setTimeout(r, 10));
    }
    expect(waiting).toBe(1);
    // Parked before its row took a seq: the sequence has given out nothing since the first one's.
    const [{ last }] = await ds.query("SELECT last_value::text AS last FROM pg_sequences WHERE sequencename = 'events_seq_seq' AND schemaname = current_schema()");
    const [{ seq: firstSeq }] = await first.manager.query('SELECT seq::text AS seq FROM events WHERE id = $1', [a]);
    expect(last).toBe(firstSeq);
    await first.commitTransaction();
    const [b] = await second;
    const rows: { id: string; seq: string }[] = await ds.query('SELECT id, seq FROM events WHERE id = ANY($1::uuid[])', [[a, b]]);
    const seq = (id: string) => BigInt(rows.find((r) => r.id === id)!.seq);
    expect(seq(a) < seq(b)).toBe(true);
    await ds.query('DELETE FROM events WHERE id = ANY($1::uuid[])', [[a, b]]);
  } finally {
    if (first.isTransactionActive) await first.rollbackTransaction();
    await first.release();
    await second?.catch(() => undefined);
  }
  });
});

describe('sandbox reset', () => {
  it('writes one sandbox_reset event, visible without any event grant', async () => {
    const res = await svc.api('/sandbox/reset', { method: 'POST', json: { tenant_id: svc.betaId } });
    expect(res.status).toBe(200);
    const resets = await feed(svc.betaId, { kind: 'sandbox_reset' });
    expect(resets).toHaveLength(1);
    expect(resets[0]).toMatchObject({ kind: 'sandbox_reset', tenant_id: svc.betaId, connection_id: null });
    // The re-import after a reset is an initial import again: no change events.
    expect((await feed(svc.betaId)).map((e) => e.kind)).toEqual(['sandbox_reset']);
  });
});
