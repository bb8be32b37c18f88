import { startStandalone } from '../../simulators/kit';
import { createConnectWiseSimulator } from '../../simulators/connectwise/simulator';
import { loadConnectWiseFixtures } from '../../simulators/connectwise/fixtures';
import type { CwRecord } from '../../simulators/connectwise/store';
import { VendorHttpClient, VendorHttpError } from '../vendor-http';
import type { FetchedPage, FetchedRecord, StoredComparison, SyncContext, SyncResource } from '../types';
import { completedPages } from '../read-dispatch';
import { connectwiseConnector } from './connector';

const INSTANCE = 'sandbox-alpha';
const { resources: fixtures, statusMapping } = loadConnectWiseFixtures(INSTANCE);
const fx = (name: string) => fixtures[name] as CwRecord[];

const sim = createConnectWiseSimulator();
let mount: string;
let close: () => Promise<void>;

const CREDENTIALS = {
  companyId: 'sandbox',
  publicKey: 'sandbox-public',
  privateKey: 'sandbox-private',
  clientId: '00000000-0000-0000-0000-000000000000',
};

function ctx(over: Partial<SyncContext> = {}): SyncContext {
  return {
    baseUrl: `${mount}/v4_6_release/apis/3.0`,
    credentials: CREDENTIALS,
    statusMapping,
    since: null,
    http: new VendorHttpClient({ baseDelayMs: 10 }),
    ...over,
  };
}

/** A fetched record whose native payload the test reads freely. */
type Got<R extends SyncResource> = FetchedRecord<R> & { native: CwRecord };

/** Every page, completed as the sync completes it (with `compare` as the store's answer). */
async function fetchAll<R extends SyncResource>(resource: R, c = ctx(), compare?: (records: FetchedRecord[], bookkeeping: readonly string[]) => Promise<StoredComparison>): Promise<{ records: Got<R>[]; pages: number }> {
  const records: Got<R>[] = [];
  let pages = 0;
  for await (const page of completedPages(connectwiseConnector.fetch(resource, c), compare)) {
    records.push(...(page as Got<R>[]));
    pages++;
  }
  return { records, pages };
}

/** Fixture records each canonical resource comes from, and the simulator table holding them. */
const SOURCES: Record<string, { table: string; rows: () => CwRecord[] }[]> = {
  boards: [{ table: 'boards', rows: () => fx('boards') }],
  statuses: [{ table: 'statuses', rows: () => fx('statuses') }],
  priorities: [{ table: 'priorities', rows: () => fx('priorities') }],
  members: [{ table: 'members', rows: () => fx('members') }],
  companies: [{ table: 'companies', rows: () => fx('companies') }],
  contacts: [{ table: 'contacts', rows: () => fx('contacts') }],
  tickets: [{ table: 'tickets', rows: () => fx('tickets') }, { table: 'project_tickets', rows: () => fx('project_tickets') }],
  projects: [{ table: 'projects', rows: () => fx('projects') }],
  agreements: [{ table: 'agreements', rows: () => fx('agreements') }],
  agreement_lines: [{ table: 'additions', rows: () => fx('additions') }],
  products: [{ table: 'catalog', rows: () => fx('catalog') }],
};

beforeAll(async () => {
  ({ url: mount, close } = await startStandalone(sim));
});
afterAll(() => close());
beforeEach(() => {
  sim.reset();
  sim.seed(INSTANCE, fixtures);
});

describe('full fetch', () => {
  it('syncs the PSA resources in order, tickets and the rest incrementally', () => {
    expect(connectwiseConnector.kind).toBe('psa');
    expect(connectwiseConnector.resources).toEqual(Object.keys(SOURCES));
  });

  it.each(Object.keys(SOURCES))('%s: every fixture record, native exactly as the simulator holds it', async (resource) => {
    const { records } = await fetchAll(resource as SyncResource);
    const expected = SOURCES[resource].flatMap((s) => s.rows().map((r) => ({ table: s.table, id: r.id })));
    expect(records.map((r) => r.sourceId).sort()).toEqual(expected.map((e) => String(e.id)).sort());
    for (const { table, id } of expected) {
      const rec = records.find((r) => r.sourceId === String(id))!;
      expect(rec.native).toEqual(sim.get(INSTANCE, table, id));
      const lastUpdated = sim.get(INSTANCE, table, id)!._info?.lastUpdated;
      expect(rec.vendorUpdatedAt).toEqual(lastUpdated ? new Date(lastUpdated) : null);
    }
  });

  it('maps tickets to canonical fields', async () => {
    const { records } = await fetchAll('tickets', ctx({ baseline: true }));
    for (const t of records) {
      const n = t.native;
      expect(t.fields.status).toBe(statusMapping[n.status.name]);
      expect(t.fields.status).not.toBeNull();
      expect(t.fields).toMatchObject({
        summary: n.summary, nativeStatus: n.status.name, statusSourceId: String(n.status.id), boardSourceId: String(n.board.id),
        boardName: n.board.name, companyName: n.company.name, companySourceId: String(n.company.id), recordType: n.recordType,
        closed: n.closedFlag, noteCount: 0, openedAt: new Date(n._info.dateEntered), closedAt: n.closedDate ? new Date(n.closedDate) : null,
      });
      expect(t.fields.priority).not.toBeNull();
    }
    const emergency = records.find((t) => t.native.priority.name.startsWith('Priority 1'))!;
    expect(emergency.fields.priority).toBe('critical');
    const projectTicket = records.find((t) => t.native.recordType === 'ProjectTicket')!;
    expect(projectTicket.fields.projectSourceId).toBe(String(projectTicket.native.project.id));
    expect(records.some((t) => t.fields.closed && t.fields.closedAt)).toBe(true);
  });

  it('maps members, statuses, agreements, lines and the baseline project', async () => {
    const members = (await fetchAll('members')).records;
    const inactive = members.find((m) => m.native.inactiveFlag)!;
    expect(inactive.fields).toMatchObject({ memberRef: inactive.native.identifier, active: false, email: inactive.native.primaryEmail });
    expect(members.filter((m) => m.fields.active).length).toBe(fx('members').filter((m) => !m.inactiveFlag).length);

    const statuses = (await fetchAll('statuses')).records;
    for (const s of statuses) {
      expect(s.fields).toMatchObject({ boardSourceId: String(s.native.board.id), closed: s.native.closedStatus, canonical: statusMapping[s.native.name] });
    }

    const agreements = (await fetchAll('agreements')).records;
    const byStatus = (st: string) => agreements.filter((a) => a.fields.status === st);
    expect(byStatus('cancelled').length).toBe(fx('agreements').filter((a) => a.agreementStatus === 'Cancelled').length);
    const monthly = agreements.find((a) => a.native.billingCycle.name === 'Monthly')!;
    expect(monthly.fields).toMatchObject({ billingCycle: 'monthly', monthlyRecurringRevenue: monthly.native.billAmount, startDate: monthly.native.startDate.slice(0, 10) });
    const annual = agreements.find((a) => a.native.billingCycle.name === 'Annual')!;
    expect(annual.fields).toMatchObject({ billingCycle: 'annual', monthlyRecurringRevenue: null, endDate: annual.native.endDate.slice(0, 10) });

    const lines = (await fetchAll('agreement_lines')).records;
    const cancelledLine = lines.find((l) => l.native.cancelledDate)!;
    expect(cancelledLine.fields).toMatchObject({
      agreementSourceId: String(cancelledLine.native.agreementId), productName: cancelledLine.native.product.description,
      productSourceId: String(cancelledLine.native.product.id), quantity: cancelledLine.native.quantity,
      effectiveStart: cancelledLine.native.effectiveDate.slice(0, 10), effectiveEnd: cancelledLine.native.cancelledDate.slice(0, 10),
    });

    const projects = (await fetchAll('projects')).records;
    expect(projects.filter((p) => p.fields.baseline).map((p) => p.native.type.name)).toEqual(['Baseline']);
  });

  it('maps the catalogue, which holds every product an addition names (one retired)', async () => {
    const products = (await fetchAll('products')).records;
    for (const p of products) {
      expect(p.fields).toEqual({
        name: p.native.description, sku: p.native.identifier, unitPrice: p.native.price, unitCost: p.native.cost, active: !p.native.inactiveFlag,
      });
    }
    expect(products.filter((p) => p.fields.active === false).map((p) => p.fields.sku)).toEqual(['AV-LEGACY']);
    const productIds = new Set(products.map((p) => p.sourceId));
    const lines = (await fetchAll('agreement_lines')).records;
    expect(lines.every((l) => productIds.has(l.fields.productSourceId!))).toBe(true);
  });

  it('follows the Link header across pages of 1000', async () => {
    sim.grow(INSTANCE, 'tickets', 2100);
    const { records, pages } = await fetchAll('tickets', ctx({ baseline: true }));
    // 2160 service tickets in 3 pages, then one page of project tickets.
    expect(pages).toBe(4);
    expect(records.length).toBe(fx('tickets').length + 2100 + fx('project_tickets').length);
    expect(new Set(records.map((r) => r.sourceId)).size).toBe(records.length);
  });

  it('fails with the vendor 401 on bad credentials', async () => {
    const bad = ctx({ credentials: { ...CREDENTIALS, privateKey: 'nope' } });
    await expect(fetchAll('boards', bad)).rejects.toMatchObject({ status: 401, body: { code: 'Unauthorized' } });
    await expect(fetchAll('boards', bad)).rejects.toBeInstanceOf(VendorHttpError);
  });
});

describe('throttling', () => {
  it('retries a 429 with Retry-After and completes', async () => {
    sim.faults.inject({ status: 429, times: 1, retryAfterSeconds: 1, pathIncludes: '/service/tickets' });
    const { records } = await fetchAll('tickets');
    expect(records.length).toBe(fx('tickets').length + fx('project_tickets').length);
    // The list twice (the 429, then its retry); the per-ticket description notes (/service/tickets/{id}/notes) aside.
    expect(sim.faults.countRequests('/service/tickets', 'GET') - sim.faults.countRequests('/service/tickets/', 'GET')).toBe(2);
  });

  it('retries a burst of three 503s and completes', async () => {
    sim.faults.inject({ status: 503, times: 3, pathIncludes: '/service/tickets' });
    const { records } = await fetchAll('tickets');
    expect(records.length).toBe(fx('tickets').length + fx('project_tickets').length);
    expect(sim.faults.countRequests('/service/tickets', 'GET') - sim.faults.countRequests('/service/tickets/', 'GET')).toBe(4);
  });
});

describe('incremental', () => {
  const maxUpdated = (records: FetchedRecord[]) => new Date(Math.max(...records.map((r) => r.vendorUpdatedAt!.getTime())));

  it('after an MSP edit, since = last watermark returns that ticket and nothing else that changed', async () => {
    const first = (await fetchAll('tickets')).records;
    const since = maxUpdated(first);
    const target = first.find((r) => r.native.recordType === 'ServiceTicket' && r.vendorUpdatedAt!.getTime() < since.getTime())!;
    sim.update(INSTANCE, 'tickets', Number(target.sourceId), { summary: 'Printer jammed again (edited in ConnectWise)' });

    const second = (await fetchAll('tickets', ctx({ since }))).records;
    const changed = second.find((r) => r.sourceId === target.sourceId)!;
    expect(changed.fields.summary).toBe('Printer jammed again (edited in ConnectWise)');
    expect(changed.vendorUpdatedAt!.getTime()).toBeGreaterThan(since.getTime());
    // The watermark is inclusive (lastUpdated >= since): besides the edit, only records stamped
    // exactly at the watermark come back, unchanged.
    const others = second.filter((r) => r.sourceId !== target.sourceId);
    for (const r of others) {
      expect(r.vendorUpdatedAt).toEqual(since);
      expect(r.native).toEqual(first.find((f) => f.sourceId === r.sourceId)!.native);
    }
    expect(second.length).toBeLessThan(first.length);
  });

  it('filters companies, contacts, projects and agreements by lastUpdated too', async () => {
    for (const resource of ['companies', 'contacts', 'projects', 'agreements'] as const) {
      const first = (await fetchAll(resource)).records;
      const since = maxUpdated(first);
      const again = (await fetchAll(resource, ctx({ since }))).records;
      expect(again.length).toBeGreaterThan(0);
      expect(again.every((r) => r.vendorUpdatedAt!.getTime() >= since.getTime())).toBe(true);
      expect(again.length).toBeLessThan(first.length);
    }
  });

  it('reads non-incremental resources in full even with since set', async () => {
    const since = new Date('2099-01-01T00:00:00Z');
    expect((await fetchAll('boards', ctx({ since }))).records.length).toBe(fx('boards').length);
    expect((await fetchAll('tickets', ctx({ since }))).records).toEqual([]);
  });
});

describe('per-ticket calls (note count and description) only where they tell something', () => {
  const none = () => ({ settled: new Set<string>(), unsettled: new Set<string>(), touched: new Set<string>(), edited: new Set<string>(), editedUnsettled: new Set<string>() });
  const calls = () => ({ counts: sim.faults.countRequests('/notes/count'), descriptions: sim.faults.countRequests('/notes', 'GET') - sim.faults.countRequests('/notes/count', 'GET') });

  it('a ticket a note touched is counted and described, an edited or settled one is not, unsettled ones only within the per-sync allowance, a new one is', async () => {
    const first = (await fetchAll('tickets')).records.filter((r) => r.native.recordType === 'ServiceTicket');
    // Every service ticket of the board, re-read at an early watermark.
    const since = new Date(Math.min(...first.map((r) => r.vendorUpdatedAt!.getTime())));
    const ids = first.map((r) => r.sourceId);
    const [touched, edited, created, editedNow] = ids;
    const settled = new Set(ids.slice(4, 6));
    const unsettled = new Set(ids.slice(6));
    let bookkeeping: readonly string[] = [];
    sim.faults.resetLog();
    const { records } = await fetchAll('tickets', ctx({ since }), async (_records, keys) => {
      bookkeeping = keys;
      return { ...none(), settled, unsettled, touched: new Set([touched]), edited: new Set([edited, editedNow]), editedUnsettled: new Set([editedNow]) };
    });
    expect(bookkeeping).toEqual(['_info']);
    const service = records.filter((r) => r.native.recordType === 'ServiceTicket');
    const counted = service.filter((r) => r.measured?.includes('noteCount')).map((r) => r.sourceId);
    expect(counted).toEqual(expect.arrayContaining([touched, created, editedNow]));
    expect(counted).not.toContain(edited);
    for (const id of settled) expect(counted).not.toContain(id);
    // The same-second allowance: the edit stored within its second, then unsettled re-reads.
    expect(counted.filter((id) => unsettled.has(id))).toHaveLength(Math.min(99, unsettled.size));
    // What is not read stays as stored: an edited ticket's count and description are unmeasured.
    const edit = records.find((r) => r.sourceId === edited)!;
    expect(edit.unmeasured).toEqual(expect.arrayContaining(['noteCount', 'description']));
    expect(edit.measured).toBeUndefined();
    // An edit stored within its second is counted, not described.
    expect(records.find((r) => r.sourceId === editedNow)!).toMatchObject({ measured: ['noteCount'], unmeasured: ['description'] });
    const described = service.filter((r) => r.measured?.includes('description')).map((r) => r.sourceId);
    expect(described.sort()).toEqual(counted.filter((id) => id !== editedNow).sort());
    expect(calls().counts).toBe(counted.length);
  });

  it('a ticket page makes no per-ticket call before the sync completes it with the store\'s answer', async () => {
    sim.faults.resetLog();
    const it = connectwiseConnector.fetch('tickets', ctx())[Symbol.asyncIterator]();
    const page = (await it.next()).value as FetchedPage<'tickets'>;
    expect(calls()).toEqual({ counts: 0, descriptions: 0 });
    expect(page.completion?.bookkeeping).toEqual(['_info']);
    const ids = new Set(page.map((r) => r.sourceId));
    await page.completion!.complete({ ...none(), settled: ids });
    expect(calls()).toEqual({ counts: 0, descriptions: 0 });
    await it.return?.();
  });

  it('past the allowance of 100 an unsettled ticket is taken as unchanged', async () => {
    sim.grow(INSTANCE, 'tickets', 150);
    const all = (await fetchAll('tickets')).records.filter((r) => r.native.recordType === 'ServiceTicket');
    const since = new Date(Math.min(...all.map((r) => r.vendorUpdatedAt!.getTime())));
    sim.faults.resetLog();
    const unsettled = new Set(all.map((r) => r.sourceId));
    await fetchAll('tickets', ctx({ since }), async () => ({ ...none(), unsettled }));
    expect(unsettled.size).toBeGreaterThan(100);
    expect(calls().counts).toBe(100);
  });

  it('the baseline makes no per-ticket call: descriptions and counts are left unmeasured', async () => {
    sim.grow(INSTANCE, 'tickets', 1500);
    sim.faults.resetLog();
    const { records } = await fetchAll('tickets', ctx({ baseline: true }), async () => none());
    expect(records.length).toBeGreaterThan(1500);
    expect(calls()).toEqual({ counts: 0, descriptions: 0 });
    for (const r of records) {
      expect(r.measured).toBeUndefined();
      expect(r.unmeasured).toEqual(expect.arrayContaining(['noteCount', 'description']));
      expect(r.fields).toMatchObject({ description: null, noteCount: 0 });
    }
  });
});

describe('id-only listing (the deletion scan)', () => {
  it('lists every ticket id (service and project) with fields=id, and has none for per-parent lists', async () => {
    const ids: string[] = [];
    for await (const page of connectwiseConnector.listIds!('tickets', ctx())!) ids.push(...page);
    const { records } = await fetchAll('tickets');
    expect(ids.sort()).toEqual(records.map((r) => r.sourceId).sort());
    expect(connectwiseConnector.listIds!('agreement_lines', ctx())).toBeNull();
  });
});

describe('ticket descriptions (the first detail-description note: ConnectWise has no description on read)', () => {
  it('a full read gives every fixture ticket the text of its first detail-description note, and null without one', async () => {
    const { records } = await fetchAll('tickets');
    const notes = [...fx('ticket_notes')].sort((a, b) => a.id - b.id);
    for (const t of records.filter((r) => r.native.recordType === 'ServiceTicket')) {
      const first = notes.find((n) => n.ticketId === t.native.id && n.detailDescriptionFlag === true);
      expect(t.fields.description).toBe(first ? first.text : null);
      expect(t.measured).toEqual(expect.arrayContaining(['description']));
    }
    expect(records.filter((r) => r.fields.description).length).toBeGreaterThan(0);
  });

  it('a description written with a ticket is read back after the create', async () => {
    const { connectwiseWriter } = await import('./writer');
    const board = fx('boards')[0];
    const company = fx('companies')[0];
    const created = await connectwiseWriter.createTicket({ baseUrl: ctx().baseUrl, credentials: CREDENTIALS, http: ctx().http }, {
      marker: 'msp-read-back-1', summary: 'Printer offline', description: 'The second-floor printer shows offline since the update.',
      companyName: company.name, companySourceId: String(company.id), boardSourceId: String(board.id), statusSourceId: null, prioritySourceId: null,
    } as Parameters<typeof connectwiseWriter.createTicket>[1]);
    const { records } = await fetchAll('tickets', ctx({ since: new Date(Date.now() - 60_000) }));
    const mine = records.find((r) => r.sourceId === created.ticketRef)!;
    expect(mine.fields.description).toBe('The second-floor printer shows offline since the update.');
  });
});
