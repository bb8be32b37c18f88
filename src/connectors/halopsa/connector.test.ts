import { startStandalone } from '../../simulators/kit';
import { loadHaloFixtures } from '../../simulators/halopsa/fixtures';
import { createHaloPsaSimulator, type HaloPsaSimulator } from '../../simulators/halopsa/simulator';
import type { HaloResource } from '../../simulators/halopsa/store';
import type { FetchedRecord, SyncContext, SyncResource } from '../types';
import { VendorHttpClient } from '../vendor-http';
import { haloPsaConnector } from './connector';

const INSTANCE = 'sandbox-beta';
const fixtures = loadHaloFixtures(INSTANCE);

let sim: HaloPsaSimulator;
let server: { url: string; close: () => Promise<void> };

function ctx(overrides: Partial<SyncContext> = {}): SyncContext {
  return {
    baseUrl: server.url,
    credentials: { clientId: 'sandbox', clientSecret: 'sandbox-secret' },
    statusMapping: fixtures.statusMapping,
    since: null,
    http: new VendorHttpClient({ baseDelayMs: 10 }),
    ...overrides,
  };
}

async function pagesOf<R extends SyncResource>(resource: R, c: SyncContext = ctx()): Promise<FetchedRecord<R>[][]> {
  const pages: FetchedRecord<R>[][] = [];
  for await (const page of haloPsaConnector.fetch(resource, c)) pages.push(page);
  return pages;
}

async function all<R extends SyncResource>(resource: R, c: SyncContext = ctx()): Promise<FetchedRecord<R>[]> {
  return (await pagesOf(resource, c)).flat();
}

function byId<T>(rows: T[]): Map<string, T> {
  return new Map(rows.map((r) => [String((r as { id: unknown }).id), r]));
}

beforeAll(async () => {
  sim = createHaloPsaSimulator();
  server = await startStandalone(sim);
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  sim.reset();
  sim.seed(INSTANCE, fixtures.records);
  sim.faults.clear();
  sim.faults.resetLog();
});

describe('what the limited connector syncs', () => {
  test('no boards, statuses, priorities or members', async () => {
    expect(haloPsaConnector.kind).toBe('psa');
    for (const r of ['boards', 'statuses', 'priorities', 'members'] as const) {
      expect(haloPsaConnector.resources).not.toContain(r);
      expect(() => haloPsaConnector.fetch(r, ctx())).toThrow();
    }
    expect(haloPsaConnector.incremental).toContain('tickets');
  });
});

describe('full fetch', () => {
  const cases: [SyncResource, HaloResource, number][] = [
    ['companies', 'clients', 20],
    ['contacts', 'users', 10],
    ['tickets', 'tickets', 60],
    ['projects', 'projects', 4],
    ['agreements', 'contracts', 6],
  ];
  test.each(cases)('%s: every fixture record, native exactly as the simulator holds it', async (resource, simResource, count) => {
    const fetched = await all(resource);
    const held = byId(sim.list(INSTANCE, simResource));
    expect(fetched).toHaveLength(count);
    expect(held.size).toBe(count);
    for (const rec of fetched) expect(rec.native).toEqual(held.get(rec.sourceId));
  });

  test('agreement lines: the 25 recurring-invoice lines of the contracts', async () => {
    const fetched = await all('agreement_lines');
    const lines = sim.list(INSTANCE, 'recurring_invoices').flatMap((i) => i.lines as { id: number }[]);
    expect(fetched).toHaveLength(25);
    const held = byId(lines);
    for (const rec of fetched) expect(rec.native).toEqual(held.get(rec.sourceId));
    const contractIds = new Set(sim.list(INSTANCE, 'contracts').map((c) => String(c.id)));
    expect(fetched.every((l) => contractIds.has(l.fields.agreementSourceId))).toBe(true);
    const ended = fetched.find((l) => l.fields.effectiveEnd === '2026-09-30');
    expect(ended?.fields).toMatchObject({ effectiveStart: '2026-01-01' });
    expect(typeof ended?.fields.unitPrice).toBe('number');
  });
});

describe('products (/api/Item)', () => {
  test('every item, inactive included, with the code the recurring-invoice lines carry as sku', async () => {
    const fetched = await all('products');
    const held = byId(sim.list(INSTANCE, 'items'));
    expect(fetched).toHaveLength(held.size);
    for (const rec of fetched) {
      const item = held.get(rec.sourceId)!;
      expect(rec.native).toEqual(item);
      expect(rec.fields).toEqual({
        name: item.name, sku: item.internalreference, unitPrice: item.recurringprice, unitCost: item.recurringcost, active: !item.inactive,
      });
    }
    expect(fetched.filter((p) => p.fields.active === false)).toHaveLength(1);
    // Lines name their item by code; their product_source_id is that item's id.
    const idByCode = new Map(fetched.map((p) => [p.fields.sku, p.sourceId]));
    const lines = await all('agreement_lines');
    for (const l of lines) expect(l.fields.productSourceId).toBe(idByCode.get(l.native.item_code as string));
  });
});

describe('mapping to canonical fields', () => {
  test('tickets: status through the mapping, priority, team, client, dates', async () => {
    const tickets = await all('tickets');
    const closed = tickets.filter((t) => t.native.status_id === 9);
    expect(closed.length).toBeGreaterThan(0);
    for (const t of closed) {
      expect(t.fields).toMatchObject({ status: 'closed', nativeStatus: 'Closed', closed: true });
      expect(t.fields.closedAt).toBeInstanceOf(Date);
    }
    const waiting = tickets.find((t) => t.native.status_id === 4)!;
    expect(waiting.fields).toMatchObject({ status: 'waiting', nativeStatus: 'Waiting on Customer', statusSourceId: '4', closed: false, closedAt: null });
    const critical = tickets.find((t) => t.native.priority_id === 1)!;
    expect(critical.fields).toMatchObject({ priority: 'critical', nativePriority: 'P1 - Critical', prioritySourceId: '1' });
    const first = tickets.find((t) => t.sourceId === '1001')!;
    expect(first.fields).toMatchObject({
      summary: first.native.summary, description: first.native.details, boardName: first.native.team,
      companyName: 'Harbourside Dental Group', companySourceId: '12',
    });
    expect(first.fields.openedAt?.toISOString()).toBe(`${first.native.dateoccurred}.000Z`);
    expect(first.vendorUpdatedAt?.toISOString()).toBe(`${first.native.last_update}.000Z`);
    // Every fixture status is mapped, so no ticket is left without a canonical status.
    expect(tickets.every((t) => t.fields.status !== null)).toBe(true);
  });

  test('an unmapped status stays null unless it is Halo\'s Closed', async () => {
    const tickets = await all('tickets', ctx({ statusMapping: {} }));
    expect(tickets.find((t) => t.native.status_id === 2)!.fields.status).toBeNull();
    expect(tickets.find((t) => t.native.status_id === 9)!.fields.status).toBe('closed');
  });

  test('projects: exactly one baseline, the locked one', async () => {
    const projects = await all('projects');
    const baseline = projects.filter((p) => p.fields.baseline);
    expect(baseline).toHaveLength(1);
    expect(baseline[0].native.locked).toBe(true);
    expect(projects.every((p) => p.fields.companySourceId !== null && p.fields.name.length > 0)).toBe(true);
  });

  test('agreements: status, billing cycle, dates and monthly revenue', async () => {
    const agreements = await all('agreements');
    const inactive = agreements.filter((a) => a.fields.status !== 'active');
    expect(inactive).toHaveLength(1);
    expect(inactive[0].fields.status).toBe('inactive');
    const quarterly = agreements.find((a) => a.fields.billingCycle === 'quarterly')!;
    expect(quarterly.fields.monthlyRecurringRevenue).toBeCloseTo((quarterly.native.periodchargeamount as number) / 3, 2);
    expect(agreements.find((a) => a.fields.billingCycle === 'annual')).toBeDefined();
    for (const a of agreements) expect(a.fields.startDate).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  test('contacts and companies', async () => {
    const contacts = await all('contacts');
    const laura = contacts.find((c) => c.fields.firstName === 'Laura')!;
    expect(laura.fields).toMatchObject({ lastName: 'Bennett', companySourceId: '12' });
    expect(laura.fields.email).toContain('@');
    const companies = await all('companies');
    expect(companies.filter((c) => c.fields.name === 'Atlas Plumbing Supplies').map((c) => c.fields.identifier).sort())
      .toEqual(['ATL-LDS', 'ATL-MAN']);
  });
});

describe('paging, tokens and throttling', () => {
  test('pages of 100, complete and disjoint', async () => {
    sim.grow(INSTANCE, 'tickets', 250);
    const pages = await pagesOf('tickets');
    expect(pages.map((p) => p.length)).toEqual([100, 100, 100, 10]);
    const ids = pages.flat().map((t) => t.sourceId);
    expect(new Set(ids).size).toBe(310);
  });

  test('a token is fetched once and reused; a revoked one is replaced', async () => {
    await all('companies');
    await all('contacts');
    expect(sim.faults.countRequests('/auth/token')).toBeLessThanOrEqual(1);
    sim.revokeTokens();
    sim.faults.resetLog();
    expect(await all('companies')).toHaveLength(20);
    expect(sim.faults.countRequests('/auth/token')).toBe(1);
  });

  test('wrong credentials fail the fetch', async () => {
    const bad = ctx({ credentials: { clientId: 'sandbox-x', clientSecret: 'nope' } });
    await expect(all('companies', bad)).rejects.toMatchObject({ status: 401 });
  });

  test('a 429 with Retry-After 1 is waited out and the fetch completes', async () => {
    sim.faults.inject({ status: 429, times: 1, retryAfterSeconds: 1, pathIncludes: '/api/Tickets' });
    expect(await all('tickets')).toHaveLength(60);
    expect(sim.faults.countRequests('/api/Tickets')).toBe(2);
  });

  test('a burst of three 503s is retried', async () => {
    sim.faults.inject({ status: 503, times: 3, pathIncludes: '/api/Client' });
    expect(await all('companies')).toHaveLength(20);
    expect(sim.faults.countRequests('/api/Client')).toBe(4);
  });
});

describe('incremental', () => {
  test('after one ticket changes, a fetch since then returns just that ticket', async () => {
    const since = new Date();
    sim.update(INSTANCE, 'tickets', 1017, { status_id: 3 });
    const fetched = await all('tickets', ctx({ since }));
    expect(fetched.map((t) => t.sourceId)).toEqual(['1017']);
    expect(fetched[0].fields.nativeStatus).toBe('Action Required');
    expect(fetched[0].vendorUpdatedAt!.getTime()).toBeGreaterThanOrEqual(since.getTime());
  });

  test('companies, contacts and projects honour since too', async () => {
    const since = new Date();
    sim.update(INSTANCE, 'clients', 14, { website: 'https://www.brightwater.co.uk' });
    sim.update(INSTANCE, 'users', 212, { phonenumber: '01225 400400' });
    sim.addAction(INSTANCE, 950, 'Mailboxes migrated');
    expect((await all('companies', ctx({ since }))).map((c) => c.sourceId)).toEqual(['14']);
    expect((await all('contacts', ctx({ since }))).map((c) => c.sourceId)).toEqual(['212']);
    expect((await all('projects', ctx({ since }))).map((c) => c.sourceId)).toEqual(['950']);
  });
});
