import { startStandalone } from '../../simulators/kit';
import { AUTOTASK_DEMO_INSTANCE, loadAutotaskDemoFixtures } from '../../simulators/autotask/demo-fixtures';
import { createAutotaskSimulator, type AutotaskSimulator } from '../../simulators/autotask/simulator';
import type { FetchedRecord, SyncContext, SyncResource } from '../types';
import { VendorHttpClient, VendorHttpError } from '../vendor-http';
import { autotaskConnector } from './connector';
import { autotaskErrorMessages } from './errors';

/** An Autotask refusal of a write's content: 500 or 400 with an `errors` list (errors.ts). */
function isAutotaskValidationError(err: unknown): err is VendorHttpError {
  return err instanceof VendorHttpError && (err.status === 500 || err.status === 400) && autotaskErrorMessages(err.body).length > 0;
}

const fixtures = loadAutotaskDemoFixtures();
const I = AUTOTASK_DEMO_INSTANCE;

let sim: AutotaskSimulator;
let server: { url: string; close: () => Promise<void> };

/**
 * The clock of the vendor and of the connector: from a fixed day inside the demo contracts' 2026 periods
 * and after every fixture's time, whenever the test runs; it runs on from there (watermarks need it to move).
 */
const TODAY = Date.parse('2026-12-15T12:00:00Z');
const started = Date.now();
const clock = () => TODAY + (Date.now() - started);

beforeEach(async () => {
  sim = createAutotaskSimulator({ now: clock });
  sim.seed(I, fixtures.resources);
  server = await startStandalone(sim);
});
afterEach(() => server.close());

function ctx(over: Partial<SyncContext> = {}): SyncContext {
  return {
    baseUrl: `${server.url}/atservicesrest/v1.0`,
    credentials: { username: 'sandbox', secret: 'sandbox-secret', integrationCode: 'SANDBOX' },
    statusMapping: fixtures.statusMapping,
    since: null,
    http: new VendorHttpClient({ baseDelayMs: 10 }),
    now: clock,
    ...over,
  };
}

async function collect<R extends SyncResource>(resource: R, c: SyncContext = ctx()) {
  const pages: FetchedRecord<R>[][] = [];
  for await (const page of autotaskConnector.fetch(resource, c)) pages.push(page);
  return { pages, records: pages.flat() };
}

const byId = (rows: Record<string, unknown>[]) => new Map(rows.map((r) => [String(r.id), r]));

describe('autotask connector', () => {
  it('reads every record of every entity-backed resource, with native exactly as the simulator holds it', async () => {
    const cases: [SyncResource, Parameters<AutotaskSimulator['list']>[1]][] = [
      ['members', 'Resources'], ['companies', 'Companies'], ['contacts', 'Contacts'], ['tickets', 'Tickets'],
      ['projects', 'Projects'], ['agreements', 'Contracts'], ['agreement_lines', 'ContractServices'],
    ];
    for (const [resource, entity] of cases) {
      const { records } = await collect(resource);
      const expected = byId(sim.list(I, entity));
      expect(records.map((r) => r.sourceId).sort()).toEqual([...expected.keys()].sort());
      for (const r of records) expect(r.native).toEqual(expected.get(r.sourceId));
    }
  });

  it('reads boards, statuses and priorities from the ticket picklists', async () => {
    const fields = sim.fields(I, 'Tickets');
    const values = (name: string) => fields.find((f) => f.name === name)!.picklistValues!;
    for (const [resource, field] of [['boards', 'queueID'], ['statuses', 'status'], ['priorities', 'priority']] as const) {
      const { records } = await collect(resource);
      expect(records.map((r) => r.native)).toEqual(values(field));
      expect(records.map((r) => r.sourceId)).toEqual(values(field).map((v) => v.value));
    }
    const statuses = (await collect('statuses')).records;
    expect(statuses).toHaveLength(8);
    const complete = statuses.find((s) => s.fields.name === 'Complete')!;
    expect(complete.fields).toMatchObject({ closed: true, canonical: 'closed', boardSourceId: null });
    expect(statuses.find((s) => s.fields.name === 'Waiting Vendor')!.fields).toMatchObject({ closed: false, canonical: 'waiting' });
    const priorities = (await collect('priorities')).records;
    expect(priorities.map((p) => [p.fields.name, p.fields.canonical])).toEqual([['Critical', 'critical'], ['High', 'high'], ['Medium', 'medium'], ['Low', 'low']]);
    const boards = (await collect('boards')).records;
    expect(boards.map((b) => b.fields)).toEqual([
      { name: 'Service Desk', active: true }, { name: 'Monitoring Alerts', active: true }, { name: 'Level 2 Escalations', active: true },
    ]);
  });

  it('maps tickets to canonical fields', async () => {
    const { records } = await collect('tickets');
    const companies = byId(sim.list(I, 'Companies'));
    const notes = sim.list(I, 'TicketNotes');
    for (const r of records) {
      const n = r.native;
      expect(r.fields.companyName).toBe(companies.get(String(n.companyID))!.companyName);
      expect(r.fields.closed).toBe(n.status === 5);
      expect(r.fields.noteCount).toBe(notes.filter((x) => x.ticketID === n.id).length);
      expect(r.vendorUpdatedAt).toEqual(new Date(String(n.lastActivityDate)));
    }
    const done = records.find((r) => r.native.status === 5)!;
    expect(done.fields).toMatchObject({ nativeStatus: 'Complete', status: 'closed', statusSourceId: '5' });
    expect(done.fields.closedAt).toEqual(new Date(String(done.native.completedDate)));
    const waiting = records.find((r) => r.native.status === 7)!;
    expect(waiting.fields).toMatchObject({ nativeStatus: 'Waiting Customer', status: 'waiting', closed: false, closedAt: null });
    const alert = records.find((r) => r.native.queueID === 29683482)!;
    expect(alert.fields).toMatchObject({ boardSourceId: '29683482', boardName: 'Monitoring Alerts' });
    expect(alert.fields.openedAt).toEqual(new Date(String(alert.native.createDate)));
    const critical = records.find((r) => r.native.priority === 4)!;
    expect(critical.fields).toMatchObject({ priority: 'critical', nativePriority: 'Critical', prioritySourceId: '4' });
    const onProject = records.find((r) => r.native.projectID != null)!;
    expect(onProject.fields.projectSourceId).toBe(String(onProject.native.projectID));
    expect(records.some((r) => r.fields.noteCount > 1)).toBe(true);
  });

  it('maps members, agreements, lines and projects', async () => {
    const members = (await collect('members')).records;
    const maria = members.find((m) => m.fields.displayName === 'Maria Delgado')!;
    expect(maria.fields).toMatchObject({ memberRef: maria.sourceId, active: true, email: 'maria.delgado@northwind-it.example' });
    expect(members.filter((m) => m.fields.active === false)).toHaveLength(3);

    const agreements = (await collect('agreements')).records;
    expect(agreements.filter((a) => a.fields.status === 'inactive')).toHaveLength(1);
    const summit = agreements.find((a) => a.native.id === 29684001)!;
    expect(summit.fields).toMatchObject({ status: 'active', billingCycle: 'monthly', companyName: 'Summit Dental Group', startDate: '2026-01-01', endDate: '2026-12-31' });
    // This month's billed price of its five services.
    const current = sim.list(I, 'ContractServiceUnits').filter((u) => u.contractID === 29684001 && Date.parse(String(u.startDate)) <= TODAY && TODAY < Date.parse(String(u.endDate)) + 86_400_000);
    expect(current).toHaveLength(5);
    expect(summit.fields.monthlyRecurringRevenue).toBeCloseTo(current.reduce((s, u) => s + Number(u.price), 0), 2);
    const lakeside = agreements.find((a) => a.native.id === 29684005)!;
    expect(lakeside.fields.billingCycle).toBe('quarterly');
    const blockHours = agreements.find((a) => a.native.id === 29684004)!;
    expect(blockHours.fields.monthlyRecurringRevenue).toBeNull();

    const lines = (await collect('agreement_lines')).records;
    expect(lines).toHaveLength(25);
    const line = lines.find((l) => l.native.contractID === 29684001)!;
    const services = byId(sim.list(I, 'Services'));
    const unit = current.find((u) => u.contractServiceID === line.native.id)!;
    expect(line.fields).toMatchObject({
      agreementSourceId: '29684001',
      productSourceId: String(line.native.serviceID),
      productName: services.get(String(line.native.serviceID))!.name,
      quantity: unit.units,
      unitPrice: line.native.adjustedPrice,
      unitCost: line.native.unitCost,
      effectiveStart: '2026-01-01',
      effectiveEnd: '2026-12-31',
    });

    const products = (await collect('products')).records;
    expect(products).toHaveLength(sim.list(I, 'Services').length);
    for (const p of products) {
      expect(p.fields).toEqual({ name: p.native.name, sku: null, unitPrice: p.native.unitPrice, unitCost: p.native.unitCost, active: p.native.isActive });
    }
    const serviceIds = new Set(products.map((p) => p.sourceId));
    expect(lines.every((l) => serviceIds.has(l.fields.productSourceId!))).toBe(true);

    const projects = (await collect('projects')).records;
    expect(projects.filter((p) => p.fields.baseline).map((p) => p.fields.name)).toEqual(['New Client Onboarding (Baseline)']);
    expect(projects.find((p) => p.native.id === 29685001)!.fields).toMatchObject({ status: 'In Progress', companyName: 'Harbor Logistics LLC', companySourceId: '3' });
  });

  it('pages tickets 500 at a time through nextPageUrl', async () => {
    sim.grow(I, 'Tickets', 1_200);
    const { pages, records } = await collect('tickets');
    expect(pages.map((p) => p.length)).toEqual([500, 500, 260]);
    expect(new Set(records.map((r) => r.sourceId)).size).toBe(1_260);
  });

  it('retries a 429 with Retry-After and three 503s, and still reads everything', async () => {
    sim.faults.inject({ status: 429, times: 1, retryAfterSeconds: 1, pathIncludes: 'Tickets/query' });
    const throttled = await collect('tickets');
    expect(throttled.records).toHaveLength(60);
    expect(sim.faults.countRequests('/Tickets/query')).toBe(2);

    sim.faults.resetLog();
    sim.faults.inject({ status: 503, times: 3, pathIncludes: 'Companies/query' });
    const companies = await collect('companies');
    expect(companies.records).toHaveLength(20);
    expect(sim.faults.countRequests('/Companies/query')).toBe(4);
  });

  it('incremental fetch returns only the ticket and company changed since the watermark', async () => {
    const full = await collect('tickets');
    expect(full.records).toHaveLength(60);
    const since = new Date(clock());
    sim.update(I, 'Tickets', 7042, { priority: 4 });
    sim.update(I, 'Companies', 5, { phone: '+1 614-555-0199' });
    const changed = await collect('tickets', ctx({ since }));
    expect(changed.records.map((r) => r.sourceId)).toEqual(['7042']);
    expect(changed.records[0].fields.priority).toBe('critical');
    expect(changed.records[0].vendorUpdatedAt!.getTime()).toBeGreaterThanOrEqual(since.getTime());
    expect((await collect('companies', ctx({ since }))).records.map((r) => r.sourceId)).toEqual(['5']);
    expect(autotaskConnector.incremental).toEqual(expect.arrayContaining(['tickets', 'companies']));
  });

  it('a note added in Autotask brings its ticket into the next incremental fetch', async () => {
    const since = new Date(clock());
    sim.addNote(I, 7011, { title: 'Called the user', description: 'Confirmed the printer works again.' });
    const changed = await collect('tickets', ctx({ since }));
    expect(changed.records.map((r) => r.sourceId)).toEqual(['7011']);
    const before = sim.list(I, 'TicketNotes').filter((n) => n.ticketID === 7011).length;
    expect(changed.records[0].fields.noteCount).toBe(before);
  });

  it('fails with the vendor 401 on bad credentials, without retrying', async () => {
    const bad = ctx({ credentials: { username: 'sandbox', secret: 'wrong', integrationCode: 'SANDBOX' } });
    await expect(collect('companies', bad)).rejects.toMatchObject({ name: 'VendorHttpError', status: 401, attempts: 1 });
  });

  it('recognises an Autotask refusal (500 with errors) as a validation error', async () => {
    const c = ctx();
    const err = await c.http
      .request({ method: 'POST', url: `${c.baseUrl}/Tickets`, json: { companyID: 1, status: 1, priority: 2 }, headers: { ApiIntegrationCode: 'SANDBOX', UserName: 'sandbox', Secret: 'sandbox-secret' } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VendorHttpError);
    expect(isAutotaskValidationError(err)).toBe(true);
    expect(autotaskErrorMessages((err as VendorHttpError).body).join(' ')).toMatch(/title/);
    expect(isAutotaskValidationError(new VendorHttpError('down', 503, null, null, 1))).toBe(false);
  });
});

describe('zone discovery (GET zoneInformation?user=<username>)', () => {
  it('the connection test asks the user\'s zone and passes when base_url is that zone\'s API', async () => {
    await expect(autotaskConnector.probe(ctx())).resolves.toBeUndefined();
    expect(sim.faults.countRequests('/zoneInformation', 'GET')).toBe(1);
  });

  it('refuses a base URL that is not the API user\'s zone, naming the zone\'s URL', async () => {
    const elsewhere = createAutotaskSimulator({ zone: { zoneName: 'America East 3', url: 'https://webservices14.autotask.net/ATServicesRest/' } });
    elsewhere.seed(I, fixtures.resources);
    const other = await startStandalone(elsewhere);
    try {
      await expect(autotaskConnector.probe(ctx({ baseUrl: `${other.url}/atservicesrest/v1.0` })))
        .rejects.toThrow('zone America East 3: base_url must be https://webservices14.autotask.net/ATServicesRest/v1.0');
    } finally {
      await other.close();
    }
  });
});
