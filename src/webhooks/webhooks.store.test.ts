/**
 * The fan-out statement (webhooks.store.ts, insertDeliveries) on the real store: each webhook gets a
 * pending delivery for exactly the events its ISV's visibility covers, carrying the event's feed
 * position, and announcing the same events again adds nothing.
 */
import { randomUUID } from 'node:crypto';
import { openDatabase, type Database } from '../db/database';
import { eventVisibility } from '../access/event-visibility';
import { Grant } from '../access/caller';
import { testDatabaseOptions } from '../../test/support/runtime';
import { WebhooksStore } from './webhooks.store';
import { kindMatches } from './event-access';

let db: Database;
beforeAll(async () => { db = await openDatabase(testDatabaseOptions()); }, 120_000);
afterAll(async () => { await db?.close(); });

describe('the fan-out statement', () => {
  it('adds one delivery per webhook and visible event, with its position, once', async () => {
    const tenant = randomUUID();
    const psa = randomUUID();
    const rmm = randomUUID();
    const kinds: [string, string | null][] = [
      ['ticket.updated', psa], ['device.updated', rmm], ['ticket.closed', psa], ['sandbox_reset', null], ['ticket.created', rmm], ['company.updated', psa],
    ];
    const events: { id: string; seq: string; kind: string }[] = [];
    for (const [kind, connectionId] of kinds) {
      const [row] = await db.dataSource.query(
        `INSERT INTO events (tenant_id, connection_id, kind, dedupe_key, occurred_at) VALUES ($1, $2, $3, $4, now()) RETURNING id, seq, kind`,
        [tenant, connectionId, kind, randomUUID()]);
      events.push(row);
    }
    // An event of another tenant, named by mistake: never delivered.
    const [stranger] = await db.dataSource.query(
      `INSERT INTO events (tenant_id, connection_id, kind, dedupe_key, occurred_at) VALUES ($1, $2, 'ticket.updated', $3, now()) RETURNING id`, [randomUUID(), psa, randomUUID()]);
    const tickets = { id: randomUUID(), visibility: eventVisibility([psa, rmm], (c, k) => c === psa && k === Grant.TicketEvents), kinds: null };
    const devices = { id: randomUUID(), visibility: eventVisibility([psa, rmm], (c, k) => c === rmm && k === Grant.DeviceEvents), kinds: null };
    const store = new WebhooksStore(db.dataSource);
    const ids = [...events.map((e) => e.id), stranger.id];

    const added = await store.insertDeliveries(tenant, ids, [tickets, devices]);
    expect(Object.fromEntries(added.map((a) => [a.webhook_id, a.n]))).toEqual({ [tickets.id]: 3, [devices.id]: 2 });
    const rows: { webhook_id: string; event_id: string; event_seq: string; status: string; attempts: number }[] = await db.dataSource.query(
      'SELECT webhook_id, event_id, event_seq, status, attempts FROM webhook_deliveries WHERE tenant_id = $1 ORDER BY webhook_id, event_seq', [tenant]);
    const seqOf = new Map(events.map((e) => [e.id, e.seq]));
    for (const r of rows) expect([r.event_seq, r.status, r.attempts]).toEqual([seqOf.get(r.event_id), 'pending', 0]);
    const kindsOf = (hook: string) => rows.filter((r) => r.webhook_id === hook).map((r) => events.find((e) => e.id === r.event_id)!.kind).sort();
    expect(kindsOf(tickets.id)).toEqual(['sandbox_reset', 'ticket.closed', 'ticket.updated']);
    expect(kindsOf(devices.id)).toEqual(['device.updated', 'sandbox_reset']);

    // Announced again (a page announced twice): nothing more.
    expect(await store.insertDeliveries(tenant, ids, [tickets, devices])).toEqual([]);
    const [{ n }] = await db.dataSource.query('SELECT count(*)::int AS n FROM webhook_deliveries WHERE tenant_id = $1', [tenant]);
    expect(n).toBe(5);

    // A kinds filter narrows what the grants show, exactly as its in-memory twin says (kindMatches).
    const everything = eventVisibility([psa, rmm], () => true);
    for (const filter of [['ticket.closed'], ['device', 'sandbox_reset'], ['ticket', 'health']]) {
      const hook = { id: randomUUID(), visibility: everything, kinds: filter };
      await store.insertDeliveries(tenant, ids, [hook]);
      const got: { kind: string }[] = await db.dataSource.query(
        'SELECT e.kind FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE d.webhook_id = $1 ORDER BY e.kind', [hook.id]);
      expect(got.map((r) => r.kind)).toEqual(events.map((e) => e.kind).filter((k) => kindMatches(k, filter)).sort());
    }
  });
});
