/**
 * HaloPSA as strict as the real one: GET /api/Tickets has no `third_party_id_string` filter (Halo's
 * swagger lists ~190 query parameters, that one is not among them) and Halo ignores parameters it
 * does not know, answering its first page. Hosted Halo needs `tenant=<name>` on the token request.
 */
import { startStandalone } from '../../simulators/kit';
import { loadHaloFixtures } from '../../simulators/halopsa/fixtures';
import { createHaloPsaSimulator, type HaloPsaSimulator } from '../../simulators/halopsa/simulator';
import { VendorHttpClient, VendorHttpError } from '../vendor-http';
import type { TicketDraft, WriteContext } from '../write-types';
import { haloPsaWriter as halo } from './writer';

const INSTANCE = 'sandbox-beta';
const fixtures = loadHaloFixtures(INSTANCE);

let sim: HaloPsaSimulator;
let server: { url: string; close: () => Promise<void> };

beforeAll(async () => {
  sim = createHaloPsaSimulator();
  server = await startStandalone(sim);
});
afterAll(() => server.close());
beforeEach(() => {
  sim.reset();
  sim.faults.clear();
  sim.faults.resetLog();
  sim.seed(INSTANCE, fixtures.records);
});

const ctx = (credentials: Record<string, string> = { clientId: 'sandbox', clientSecret: 'sandbox-secret' }, url = server.url): WriteContext => ({
  baseUrl: url, credentials, http: new VendorHttpClient({ baseDelayMs: 5, maxRetries: 1 }),
});

let seq = 0;
const draft = (): TicketDraft => ({
  marker: `msp-${(++seq).toString(16).padStart(8, '0')}${Date.now().toString(16)}`,
  summary: 'BitLocker recovery key not escrowed on HDG-LT044',
  description: 'The device reports BitLocker on, but no recovery key is stored in Entra ID.',
  companyName: 'Harbourside Dental Group',
  companySourceId: '12',
  boardSourceId: null,
  statusSourceId: '1',
  prioritySourceId: '2',
  projectSourceId: null,
  vendorNative: null,
});

async function bearer(): Promise<string> {
  const res = await fetch(`${server.url}/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials&client_id=sandbox&client_secret=sandbox-secret&scope=all',
  });
  return ((await res.json()) as { access_token: string }).access_token;
}

describe('the simulator filters only by what Halo documents', () => {
  it('ignores third_party_id_string and answers the first page, as Halo does', async () => {
    const token = await bearer();
    const get = async (query: string) => {
      const res = await fetch(`${server.url}/api/Tickets?${query}`, { headers: { authorization: `Bearer ${token}` } });
      return (await res.json()) as { record_count: number; tickets: { id: number }[] };
    };
    const all = await get('pageinate=true&page_size=100&page_no=1');
    const filtered = await get('pageinate=true&page_size=100&page_no=1&third_party_id_string=msp-nothing-has-this');
    expect(filtered.record_count).toBe(all.record_count);
    expect(filtered.tickets.map((t) => t.id)).toEqual(all.tickets.map((t) => t.id));
    // A documented filter does filter.
    const bySummary = await get('pageinate=true&page_size=100&page_no=1&search_summary=printer');
    expect(bySummary.record_count).toBeLessThan(all.record_count);
  });
});

describe('a HaloPSA create whose answer was lost', () => {
  it('is found again by the retry, so exactly one ticket exists', async () => {
    // Enough tickets that the new one is on no "first page" by accident.
    sim.grow(INSTANCE, 'tickets', 450);
    const d = draft();
    sim.faults.inject({ status: 500, times: 1, method: 'POST', pathIncludes: '/api/Tickets', afterHandler: 'drop' });
    const lost = await halo.createTicket(ctx(), d).catch((e: unknown) => e);
    expect(lost).toBeInstanceOf(VendorHttpError);
    expect((lost as VendorHttpError).network).toBe(true);

    // The retry, as the write job does it: reconcile by marker first, create only when nothing is found.
    sim.faults.resetLog();
    const found = await halo.findTicketByMarker(ctx(), d.marker);
    const result = found ?? (await halo.createTicket(ctx(), d));
    const made = sim.list(INSTANCE, 'tickets').filter((t) => t.third_party_id_string === d.marker);
    expect(made).toHaveLength(1);
    expect(found?.ticketRef).toBe(String(made[0].id));
    expect(result.ticketRef).toBe(String(made[0].id));
    // Bounded: the lookup is a couple of calls, not a walk over every page.
    expect(sim.faults.countRequests('/api/Tickets', 'GET')).toBeLessThanOrEqual(3);
  });

  it('finds nothing for a marker never sent, within a bounded number of calls', async () => {
    sim.grow(INSTANCE, 'tickets', 450);
    await halo.createTicket(ctx(), draft());
    sim.faults.resetLog();
    expect(await halo.findTicketByMarker(ctx(), 'msp-000000000000000000000000')).toBeNull();
    expect(sim.faults.countRequests('/api/Tickets', 'GET')).toBeLessThanOrEqual(6);
  });
});

describe('hosted Halo: the tenant on the token request', () => {
  let hosted: HaloPsaSimulator;
  let hostedServer: { url: string; close: () => Promise<void> };
  beforeAll(async () => {
    hosted = createHaloPsaSimulator({ tenant: 'harbourside' });
    hostedServer = await startStandalone(hosted);
    hosted.seed(INSTANCE, fixtures.records);
  });
  afterAll(() => hostedServer.close());

  it('refuses a token request without the tenant and accepts the tenant credential', async () => {
    const without = await halo.findTicketByMarker(ctx({ clientId: 'sandbox', clientSecret: 'sandbox-secret' }, hostedServer.url), 'msp-x').catch((e: unknown) => e);
    expect(without).toBeInstanceOf(VendorHttpError);
    expect((without as VendorHttpError).status).toBe(401);

    const withTenant = ctx({ clientId: 'sandbox', clientSecret: 'sandbox-secret', tenant: 'harbourside' }, hostedServer.url);
    const d = draft();
    const created = await halo.createTicket(withTenant, d);
    expect((await halo.findTicketByMarker(withTenant, d.marker))?.ticketRef).toBe(created.ticketRef);
  });
});
