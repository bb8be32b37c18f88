/**
 * Polling the events feed with `after=<last event id>` (docs/architecture.md, Events and webhooks): a poller that keeps only
 * the id of the last event it processed never misses and never repeats one, also when `next_cursor`
 * was null and while writers keep adding events. The writers insert through EventsService.insert in
 * their own transactions, the very path sync's change listener takes (with the tenant's feed lock), and
 * a real sync of simulator changes runs alongside them.
 */
import type { EventDraft } from '../src/events/change-detector';
import type { ConnectWiseSimulator } from '../src/simulators/connectwise/simulator';
import { startTestService, type TestService } from './support/service';

let svc: TestService;
const TOTAL = 10_000;

beforeAll(async () => {
  svc = await startTestService();
  const connections = (await svc.api(`/tenants/${svc.alphaId}/connections`)).body.connections as { id: string; kind: string }[];
  psaConnectionId = connections.find((c) => c.kind === 'psa')!.id;
}, 120_000);
afterAll(async () => { await svc?.close(); });

const feed = (q: Record<string, string>) => svc.api(`/tenants/${svc.alphaId}/connections/events?${new URLSearchParams(q)}`);

let psaConnectionId: string;

function draft(writer: number, n: number): EventDraft {
  return {
    connectionId: psaConnectionId, kind: 'ticket.updated', type: null, dedupeKey: `poll:${writer}:${n}`, occurredAt: new Date(),
    actor: null, summary: `writer ${writer} event ${n}`, subjectRef: null, incidentId: null, canonicalTicketId: null,
    canonicalDeviceId: null, canonicalCompanyId: null, previousStatus: null, newStatus: null, vendor: null, vendorId: null,
    vendorUrl: null, detail: {},
  };
}

describe('polling with after', () => {
  it(`misses and repeats nothing over ${TOTAL} events written while it polls`, async () => {
    const { ds, events } = svc.services;
    const cw = svc.services.simulators!.connectwise as ConnectWiseSimulator;
    // Start from the end of today's feed, as a new poller would after reading the backlog.
    let last: string | null = null;
    for (let i = 0; i < 1000; i++) {
      const res = await feed({ limit: '500', ...(last ? { after: last } : {}) });
      expect(res.status).toBe(200);
      if (res.body.events.length === 0) break;
      last = res.body.events[res.body.events.length - 1].id;
    }
    const before = Number((await ds.query('SELECT count(*) AS n FROM events WHERE tenant_id = $1', [svc.alphaId]))[0].n);

    // Four writers with uneven batches, and a sync of real simulator changes, all while the poller runs.
    let writing = 4;
    const perWriter = TOTAL / 4;
    const writers = [0, 1, 2, 3].map(async (w) => {
      try {
        for (let n = 0; n < perWriter;) {
          const size = Math.min(perWriter - n, 1 + ((n * 7 + w * 13) % 97));
          const batch = Array.from({ length: size }, (_, i) => draft(w, n + i));
          const ids = await ds.transaction((m) => events.insert(m, svc.alphaId, batch));
          expect(ids).toHaveLength(size);
          n += size;
          if (n % 5 === 0) await new Promise((r) => setImmediate(r));
        }
      } finally {
        writing--;
      }
    });
    cw.update('sandbox-alpha', 'tickets', 30108, { summary: 'Changed in the PSA while a poller runs' });
    const synced = svc.api(`/tenants/${svc.alphaId}/sync`, { method: 'POST', json: {} });

    const seen: string[] = [];
    let emptyAfterNull = 0;
    let pollsWhileWriting = 0;
    for (let polls = 0; polls < 100_000; polls++) {
      const done = writing === 0;
      if (!done) pollsWhileWriting++;
      const limit = String(1 + (polls % 7) * 37); // 1 .. 223, uneven pages
      const res = await feed({ limit, ...(last ? { after: last } : {}) });
      expect(res.status).toBe(200);
      for (const e of res.body.events) seen.push(e.id);
      if (res.body.events.length) last = res.body.events[res.body.events.length - 1].id;
      // next_cursor null does not strand the poller: it keeps asking after its last id.
      if (res.body.next_cursor === null && res.body.events.length === 0) emptyAfterNull++;
      if (done && res.body.events.length === 0) break;
    }
    await Promise.all(writers);
    expect((await synced).status).toBe(200);
    // Drain what the sync wrote after the writers finished.
    for (let i = 0; i < 100; i++) {
      const res = await feed({ limit: '500', after: last! });
      if (res.body.events.length === 0) break;
      for (const e of res.body.events) seen.push(e.id);
      last = res.body.events[res.body.events.length - 1].id;
    }

    const stored: { id: string }[] = await ds.query('SELECT id FROM events WHERE tenant_id = $1 ORDER BY seq OFFSET $2', [svc.alphaId, before]);
    expect(new Set(seen).size).toBe(seen.length); // nothing repeated
    expect(seen).toEqual(stored.map((r) => r.id)); // nothing missed, in feed order
    expect(seen.length).toBeGreaterThanOrEqual(TOTAL + 1); // the writers' events and the sync's
    expect(emptyAfterNull).toBeGreaterThan(0);
    expect(pollsWhileWriting).toBeGreaterThan(10); // the poller really ran alongside the writers
  }, 600_000);

  it('every event carries its position; after resumes right after the named event', async () => {
    const page = await feed({ limit: '5' });
    expect(page.status).toBe(200);
    const positions = page.body.events.map((e: any) => BigInt(e.position));
    for (let i = 1; i < positions.length; i++) expect(positions[i] > positions[i - 1]).toBe(true);
    const next = await feed({ limit: '3', after: page.body.events[1].id });
    expect(next.body.events.map((e: any) => e.id)).toEqual(page.body.events.slice(2, 5).map((e: any) => e.id));
  });

  it('refuses an after that names no visible event, a malformed one, and after together with cursor', async () => {
    const unknown = await feed({ after: '00000000-0000-4000-8000-000000000000' });
    expect(unknown.status).toBe(422);
    expect(unknown.body).toMatchObject({ code: 'validation', details: { field: 'after' } });
    // An event of another tenant is no resume point here.
    const [other] = await svc.services.ds.query('SELECT id FROM events WHERE tenant_id = $1 LIMIT 1', [svc.betaId]);
    if (other) expect((await feed({ after: other.id })).status).toBe(422);
    const malformed = await feed({ after: 'not-an-id' });
    expect(malformed.status).toBe(422);
    expect(malformed.body.detail[0].loc).toEqual(['query', 'after']);
    const first = await feed({ limit: '1' });
    const both = await feed({ after: first.body.events[0].id, cursor: first.body.next_cursor ?? 'eA' });
    expect(both.status).toBe(422);
  });
});
