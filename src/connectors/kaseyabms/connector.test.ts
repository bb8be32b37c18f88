/**
 * Kaseya BMS read connector against the simulator: one bad vendor record (a row without an integer id,
 * a null or malformed entry in a contact's Emails or Phones, a billing cycle named like an Object
 * member) is skipped or read as unknown, and the rest of the sync goes on.
 */
import { startStandalone } from '../../simulators/kit';
import { loadVendorFixtures } from '../../sandbox/fixtures';
import { createKaseyaBmsSimulator, type KaseyaBmsSimulator } from '../../simulators/kaseyabms/simulator';
import type { FetchedRecord, SyncContext, SyncResource } from '../types';
import { VendorHttpClient } from '../vendor-http';
import { kaseyaBmsConnector } from './connector';

const fixtures = loadVendorFixtures('sandbox-gamma', 'kaseyabms').resources as Record<string, Record<string, unknown>[]>;
let sim: KaseyaBmsSimulator;
let server: { url: string; close: () => Promise<void> };

beforeAll(async () => {
  sim = createKaseyaBmsSimulator();
  server = await startStandalone(sim);
});
afterAll(async () => { await server.close(); });
beforeEach(() => {
  sim.reset();
  sim.seed('sandbox-gamma', fixtures);
});

const ctx = (): SyncContext => ({
  baseUrl: server.url, credentials: { username: 'sandbox', password: 'sandbox-secret', tenant: 'SANDBOX-GAMMA' }, statusMapping: {}, since: null,
  http: new VendorHttpClient({ baseDelayMs: 10, maxDelayMs: 50 }),
});

async function fetchAll<R extends SyncResource>(resource: R): Promise<FetchedRecord<R>[]> {
  const out: FetchedRecord<R>[] = [];
  for await (const page of kaseyaBmsConnector.fetch(resource, ctx())) out.push(...page);
  return out;
}

describe('Kaseya BMS connector: one bad record', () => {
  it('rows without an integer Id are skipped (none keyed "undefined"); the rest sync', async () => {
    const noId = (over: Record<string, unknown>) => [{ ...over }, { ...over, Id: null }, { ...over, Id: 'x' }, { ...over, Id: 1.5 }];
    sim.seed('sandbox-gamma', {
      ...fixtures,
      accounts: [...fixtures.accounts, ...noId({ AccountName: 'Ghost Account' })],
      contacts: [...fixtures.contacts, ...noId({ FirstName: 'Ghost' })],
      tickets: [...fixtures.tickets, ...noId({ Title: 'Ghost ticket' })],
      contracts: [...fixtures.contracts, ...noId({ ContractName: 'Ghost contract' })],
    });
    for (const [resource, table] of [['companies', 'accounts'], ['contacts', 'contacts'], ['tickets', 'tickets'], ['agreements', 'contracts']] as const) {
      const ids = (await fetchAll(resource)).map((r) => r.sourceId);
      expect(ids.sort()).toEqual(fixtures[table].map((r) => String(r.Id)).sort());
    }
  });

  it('a null or malformed entry in Emails or Phones is passed over; a wrong-typed member reads as none', async () => {
    const [first, ...rest] = fixtures.contacts;
    const emails = first.Emails as Record<string, unknown>[];
    const phones = first.Phones as Record<string, unknown>[];
    sim.seed('sandbox-gamma', {
      ...fixtures,
      contacts: [
        { ...first, Emails: [null, 'junk', 7, ...emails], Phones: [null, [], ...phones] },
        { ...rest[0], Id: 9901, Emails: [null], Phones: 'not a list', FirstName: 42, AccountId: 'x' },
        ...rest,
      ],
    });
    const records = await fetchAll('contacts');
    const one = records.find((r) => r.sourceId === String(first.Id))!;
    expect(one.fields.email).toBe(emails.find((e) => e.IsDefault)?.EmailAddress ?? emails[0].EmailAddress);
    expect(one.fields.phone).toBe(phones.find((p) => p.IsDefault)?.Phone ?? phones[0].Phone);
    expect(records.find((r) => r.sourceId === '9901')!.fields).toMatchObject({ email: null, phone: null, firstName: null });
    expect(records).toHaveLength(fixtures.contacts.length + 1);
  });

  it('a billing cycle named like an Object member ("constructor") is an unknown cycle, not NaN revenue', async () => {
    sim.seed('sandbox-gamma', { ...fixtures, contracts: fixtures.contracts.map((c, i) => (i === 0 ? { ...c, BillingCycle: 'constructor' } : c)) });
    const first = (await fetchAll('agreements')).find((r) => r.sourceId === String(fixtures.contracts[0].Id))!;
    expect(first.fields).toMatchObject({ billingCycle: 'unknown', monthlyRecurringRevenue: null });
  });
});
