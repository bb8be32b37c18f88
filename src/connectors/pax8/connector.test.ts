import { startStandalone } from '../../simulators/kit';
import { createPax8Simulator, type Pax8Simulator } from '../../simulators/pax8/simulator';
import { readPax8Fixtures } from '../../simulators/pax8/test-fixtures';
import type { FetchedRecord, SyncContext, SyncResource } from '../types';
import { VendorHttpClient, VendorHttpError } from '../vendor-http';
import { pax8Connector } from './connector';
import { clearSessionTokens } from '../vendor-session';

const INSTANCE = 'sandbox-alpha';
const fixtures = readPax8Fixtures();

let sim: Pax8Simulator;
let server: { url: string; close: () => Promise<void> };

function ctx(overrides: Partial<SyncContext> = {}): SyncContext {
  return {
    baseUrl: `${server.url}/v1`,
    credentials: { clientId: 'sandbox', clientSecret: 'sandbox-secret' },
    statusMapping: {},
    since: null,
    http: new VendorHttpClient({ baseDelayMs: 10 }),
    ...overrides,
  };
}

async function fetchAll<R extends SyncResource>(resource: R, c = ctx()) {
  const pages: FetchedRecord<R>[][] = [];
  for await (const page of pax8Connector.fetch(resource, c)) pages.push(page);
  return { pages, records: pages.flat() };
}

const requests = (path: string, method = 'GET') => sim.faults.countRequests(path, method);

beforeAll(async () => {
  sim = createPax8Simulator();
  server = await startStandalone(sim);
});
beforeEach(() => {
  sim.reset();
  sim.seed(INSTANCE, fixtures);
  sim.faults.clear();
  sim.faults.resetLog();
  clearSessionTokens();
});
afterAll(() => server.close());

describe('pax8 connector', () => {
  test('declares a distributor syncing companies, contacts, products and subscriptions, with no incremental filter', () => {
    expect(pax8Connector.kind).toBe('distributor');
    expect(pax8Connector.resources).toEqual(['companies', 'contacts', 'products', 'subscriptions']);
    expect(pax8Connector.incremental).toEqual([]);
  });

  test('full fetch returns every company, native exactly as the vendor holds it', async () => {
    const { records } = await fetchAll('companies');
    const expected = sim.list(INSTANCE, 'companies');
    expect(records.map((r) => r.sourceId).sort()).toEqual(expected.map((c) => c.id).sort());
    for (const r of records) {
      const vendor = sim.get(INSTANCE, 'companies', r.sourceId)!;
      expect(r.native).toEqual(vendor);
      expect(r.fields).toEqual({ name: vendor.name, identifier: vendor.externalId ?? null });
      expect(r.vendorUpdatedAt).toEqual(new Date(vendor.updatedDate));
    }
    // Companies without an externalId in the fixtures map to a null identifier.
    expect(records.filter((r) => r.fields.identifier === null).length).toBeGreaterThan(0);
  });

  test('products and subscriptions: every record, native as the vendor holds it, mapped', async () => {
    const products = (await fetchAll('products')).records;
    expect(products.map((r) => r.sourceId).sort()).toEqual(sim.list(INSTANCE, 'products').map((p) => p.id).sort());
    for (const r of products) {
      const vendor = sim.get(INSTANCE, 'products', r.sourceId)!;
      expect(r.native).toEqual(vendor);
      expect(r.fields).toEqual({ name: vendor.name, sku: vendor.sku, unitPrice: null, unitCost: null, active: null });
    }
    const subs = (await fetchAll('subscriptions')).records;
    expect(subs.map((r) => r.sourceId).sort()).toEqual(sim.list(INSTANCE, 'subscriptions').map((s) => s.id).sort());
    const productIds = new Set(products.map((p) => p.sourceId));
    for (const r of subs) {
      const vendor = sim.get(INSTANCE, 'subscriptions', r.sourceId)! as unknown as Record<string, unknown>;
      expect(r.native).toEqual(vendor);
      expect(r.fields).toMatchObject({
        companySourceId: vendor.companyId, productSourceId: vendor.productId, quantity: vendor.quantity, price: vendor.price,
        partnerCost: vendor.partnerCost, billingTerm: vendor.billingTerm, status: vendor.status,
      });
      expect(productIds.has(r.fields.productSourceId!)).toBe(true);
      expect(r.vendorUpdatedAt).toEqual(new Date(vendor.updatedDate as string));
    }
  });

  test('full fetch returns every contact once, with the company it belongs to', async () => {
    const { records } = await fetchAll('contacts');
    const expected = sim.list(INSTANCE, 'contacts');
    expect(records).toHaveLength(expected.length);
    expect(new Set(records.map((r) => r.sourceId)).size).toBe(records.length);
    for (const r of records) {
      const vendor = sim.get(INSTANCE, 'contacts', r.sourceId)!;
      expect(r.native).toEqual(vendor);
      expect(r.vendorUpdatedAt).toBeNull();
      expect(r.fields).toEqual({
        firstName: vendor.firstName, lastName: vendor.lastName, email: vendor.email, phone: vendor.phone,
        companySourceId: sim.companyOfContact(INSTANCE, r.sourceId),
      });
    }
  });

  test('pages of 200 are followed to the last page', async () => {
    sim.grow(INSTANCE, 'companies', 450);
    const { pages, records } = await fetchAll('companies');
    expect(records).toHaveLength(fixtures.companies.length + 450);
    expect(new Set(records.map((r) => r.sourceId)).size).toBe(records.length);
    expect(pages.map((p) => p.length)).toEqual([200, 200, 62]);
    expect(requests('/v1/companies')).toBe(3);
  });

  test('contacts are paged per company too', async () => {
    const company = sim.create(INSTANCE, 'companies', {
      name: 'Graphic Design Institute', phone: '206-555-0177', website: 'https://graphicdesigninstitute.com',
      address: { street: '9 Pine St', city: 'Seattle', stateOrProvince: 'WA', postalCode: '98101', country: 'US' },
      billOnBehalfOfEnabled: false, selfServiceAllowed: false, orderApprovalRequired: false,
    });
    for (let i = 0; i < 230; i++) {
      sim.create(INSTANCE, 'contacts', { companyId: company.id, firstName: `Staff${i}`, lastName: 'Member', email: `staff${i}@gdi.example`, phone: '206-555-0100' });
    }
    const { records } = await fetchAll('contacts');
    const mine = records.filter((r) => r.fields.companySourceId === company.id);
    expect(mine).toHaveLength(230);
    expect(new Set(mine.map((r) => r.sourceId)).size).toBe(230);
    expect(requests(`/v1/companies/${company.id}/contacts`)).toBe(2);
  });

  test('ctx.since does not narrow the fetch: Pax8 has no last-updated filter', async () => {
    const { records } = await fetchAll('companies', ctx({ since: new Date('2099-01-01T00:00:00Z') }));
    expect(records).toHaveLength(fixtures.companies.length);
  });

  test('a change made in Pax8 shows up in the next fetch with its new updatedDate', async () => {
    const target = sim.list(INSTANCE, 'companies')[0];
    const before = (await fetchAll('companies')).records.find((r) => r.sourceId === target.id)!;
    const changed = sim.update(INSTANCE, 'companies', target.id, { externalId: 'ContosoHQ' });
    const after = (await fetchAll('companies')).records.find((r) => r.sourceId === target.id)!;
    expect(after.fields.identifier).toBe('ContosoHQ');
    expect(after.native).toEqual(changed);
    expect(after.vendorUpdatedAt!.getTime()).toBeGreaterThan(before.vendorUpdatedAt!.getTime());
  });

  test('the token is requested once and reused across fetches', async () => {
    await fetchAll('companies');
    await fetchAll('contacts');
    expect(requests('/v1/token', 'POST')).toBe(1);
  });

  test('a 401 on a cached token gets a new token and the fetch completes', async () => {
    await fetchAll('companies');
    sim.faults.inject({ status: 401, times: 1, pathIncludes: '/v1/companies' });
    const { records } = await fetchAll('companies');
    expect(records).toHaveLength(fixtures.companies.length);
    expect(requests('/v1/token', 'POST')).toBe(2);
  });

  test('wrong credentials fail with the vendor\'s 401', async () => {
    const failing = fetchAll('companies', ctx({ credentials: { clientId: 'sandbox', clientSecret: 'wrong' } }));
    await expect(failing).rejects.toBeInstanceOf(VendorHttpError);
    await expect(failing).rejects.toMatchObject({ status: 401 });
    expect(requests('/v1/companies')).toBe(0);
  });

  test('a 429 with Retry-After 1 is waited out and retried', async () => {
    sim.faults.inject({ status: 429, times: 1, retryAfterSeconds: 1, pathIncludes: '/v1/companies' });
    const { records } = await fetchAll('companies');
    expect(records).toHaveLength(fixtures.companies.length);
    expect(requests('/v1/companies')).toBe(2);
  });

  test('a burst of three 503s is retried', async () => {
    sim.faults.inject({ status: 503, times: 3, pathIncludes: '/contacts' });
    const { records } = await fetchAll('contacts');
    expect(records).toHaveLength(sim.list(INSTANCE, 'contacts').length);
    const contactCalls = sim.faults.requests.filter((r) => r.path.endsWith('/contacts')).length;
    expect(contactCalls).toBe(sim.list(INSTANCE, 'companies').length + 3);
  });

  test('resources it does not sync are refused', async () => {
    await expect(fetchAll('tickets')).rejects.toThrow(/does not sync tickets/);
  });
});
