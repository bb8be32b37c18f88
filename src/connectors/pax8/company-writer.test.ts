import { startStandalone } from '../../simulators/kit';
import { createPax8Simulator, type Pax8Simulator } from '../../simulators/pax8/simulator';
import { readPax8Fixtures } from '../../simulators/pax8/test-fixtures';
import type { DistributorCompanyDraft } from '../distributor-write-types';
import { VendorHttpClient, VendorHttpError } from '../vendor-http';
import { VendorValidationError } from '../vendor-errors';
import type { WriteContext } from '../write-types';
import { pax8CompanyWriter as writer } from './company-writer';
import { clearSessionTokens } from '../vendor-session';

const INSTANCE = 'sandbox-alpha';
const fixtures = readPax8Fixtures();

let sim: Pax8Simulator;
let server: { url: string; close: () => Promise<void> };

function ctx(overrides: Partial<WriteContext> = {}): WriteContext {
  return {
    baseUrl: `${server.url}/v1`,
    credentials: { clientId: 'sandbox', clientSecret: 'sandbox-secret' },
    http: new VendorHttpClient({ baseDelayMs: 10 }),
    ...overrides,
  };
}

const draft = (over: Partial<DistributorCompanyDraft> = {}): DistributorCompanyDraft => ({
  name: 'Wide World Importers',
  address: { street: '77 Dock St', street2: 'Unit 4', city: 'Portland', stateOrProvince: 'OR', postalCode: '97201', country: 'US' },
  phone: '503-555-0190',
  website: 'https://wideworldimporters.example',
  externalId: null,
  billOnBehalfOfEnabled: false,
  selfServiceAllowed: true,
  orderApprovalRequired: false,
  contacts: [{ firstName: 'Ines', lastName: 'Moreau', email: 'ines@wideworldimporters.example', phone: '503-555-0191' }],
  ...over,
});

const companyCount = () => sim.list(INSTANCE, 'companies').length;
const posts = () => sim.faults.countRequests('/v1/companies', 'POST');

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

describe('pax8 company writer: checkCompany', () => {
  test('a complete draft passes', () => {
    expect(writer.checkCompany(draft())).toEqual([]);
    expect(writer.checkCompany(draft({ contacts: [], externalId: 'WWI-1', address: { ...draft().address!, street2: null } }))).toEqual([]);
  });

  const a = draft().address!;
  const cases: [string, Partial<DistributorCompanyDraft>, string[]][] = [
    ['blank name', { name: '  ' }, ['name']],
    ['no address', { address: null }, ['address']],
    ['no street', { address: { ...a, street: '' } }, ['address.street']],
    ['no city', { address: { ...a, city: '' } }, ['address.city']],
    ['no state', { address: { ...a, stateOrProvince: ' ' } }, ['address.state_or_province']],
    ['no postal code', { address: { ...a, postalCode: '' } }, ['address.postal_code']],
    ['no country', { address: { ...a, country: '' } }, ['address.country']],
    ['lower-case country', { address: { ...a, country: 'us' } }, ['address.country']],
    ['three-letter country', { address: { ...a, country: 'USA' } }, ['address.country']],
    ['country name', { address: { ...a, country: 'United States' } }, ['address.country']],
    ['no phone', { phone: null }, ['phone']],
    ['no website', { website: '' }, ['website']],
    ['no bill-on-behalf flag', { billOnBehalfOfEnabled: null }, ['bill_on_behalf_of_enabled']],
    ['no self-service flag', { selfServiceAllowed: null }, ['self_service_allowed']],
    ['no order-approval flag', { orderApprovalRequired: null }, ['order_approval_required']],
    ['contact without first name', { contacts: [{ ...draft().contacts[0], firstName: '' }] }, ['contacts[0].first_name']],
    ['contact without last name', { contacts: [{ ...draft().contacts[0], lastName: '' }] }, ['contacts[0].last_name']],
    ['contact without email', { contacts: [{ ...draft().contacts[0], email: '' }] }, ['contacts[0].email']],
    ['contact with a malformed email', { contacts: [draft().contacts[0], { ...draft().contacts[0], email: 'ines@' }] }, ['contacts[1].email']],
    ['contact without phone', { contacts: [{ ...draft().contacts[0], phone: null }] }, ['contacts[0].phone']],
  ];
  test.each(cases)('%s is refused before anything is sent', async (_label, over, fields) => {
    const before = companyCount();
    const problems = writer.checkCompany(draft(over));
    expect(problems.map((p) => p.field)).toEqual(fields);
    for (const p of problems) expect(p.message).toEqual(expect.any(String));
    expect(companyCount()).toBe(before);
    expect(sim.faults.requests).toHaveLength(0);
  });

  test('every problem is reported at once', () => {
    const problems = writer.checkCompany({
      name: '', address: null, phone: null, website: null, externalId: null,
      billOnBehalfOfEnabled: null, selfServiceAllowed: null, orderApprovalRequired: null, contacts: [],
    });
    expect(problems.map((p) => p.field)).toEqual([
      'name', 'address', 'phone', 'website', 'bill_on_behalf_of_enabled', 'self_service_allowed', 'order_approval_required',
    ]);
  });
});

describe('pax8 company writer: preview and create', () => {
  test('the preview is the one POST /companies a commit sends, contacts inline', async () => {
    const preview = writer.previewCreateCompany(draft({ externalId: 'WWI-1' }));
    expect(preview).toEqual([{
      method: 'POST',
      path: '/companies',
      body: {
        name: 'Wide World Importers',
        address: { street: '77 Dock St', street2: 'Unit 4', city: 'Portland', stateOrProvince: 'OR', postalCode: '97201', country: 'US' },
        phone: '503-555-0190',
        website: 'https://wideworldimporters.example',
        externalId: 'WWI-1',
        billOnBehalfOfEnabled: false,
        selfServiceAllowed: true,
        orderApprovalRequired: false,
        contacts: [{
          firstName: 'Ines', lastName: 'Moreau', email: 'ines@wideworldimporters.example', phone: '503-555-0191',
          types: [{ type: 'Admin', primary: true }, { type: 'Billing', primary: true }, { type: 'Technical', primary: true }],
        }],
      },
    }]);
    // No absent optional values in the body: no externalId, street2 or contacts keys.
    const bare = writer.previewCreateCompany(draft({ contacts: [], address: { ...draft().address!, street2: null } }))[0].body as Record<string, unknown>;
    expect(Object.keys(bare)).toEqual(['name', 'address', 'phone', 'website', 'billOnBehalfOfEnabled', 'selfServiceAllowed', 'orderApprovalRequired']);
    expect(Object.keys(bare.address as object)).toEqual(['street', 'city', 'stateOrProvince', 'postalCode', 'country']);
    expect(sim.faults.requests).toHaveLength(0);
  });

  test('create adds exactly one company holding the fields sent, and the preview was the request', async () => {
    const d = draft({ externalId: 'WWI-1' });
    const before = companyCount();
    const created = await writer.createCompany(ctx(), d);
    expect(companyCount()).toBe(before + 1);
    expect(posts()).toBe(1);
    const stored = sim.get(INSTANCE, 'companies', created.companyRef)!;
    expect(created.native).toEqual(stored);
    const { contacts: _c, ...sent } = writer.previewCreateCompany(d)[0].body as Record<string, unknown>;
    expect(stored).toEqual({ ...sent, id: created.companyRef, status: 'Active', updatedDate: expect.any(String) });
    const contacts = sim.list(INSTANCE, 'contacts', { companyId: created.companyRef });
    expect(contacts).toEqual([expect.objectContaining({
      firstName: 'Ines', lastName: 'Moreau', email: 'ines@wideworldimporters.example', phone: '503-555-0191',
      types: [{ type: 'Admin', primary: true }, { type: 'Billing', primary: true }, { type: 'Technical', primary: true }],
    })]);
  });

  test('a company created without contacts is Inactive, as Pax8 documents', async () => {
    const created = await writer.createCompany(ctx(), draft({ contacts: [] }));
    expect(created.native.status).toBe('Inactive');
  });

  test('an injected 429 with Retry-After is waited out and the company is created once', async () => {
    sim.faults.inject({ status: 429, times: 1, retryAfterSeconds: 1, pathIncludes: '/v1/companies', method: 'POST' });
    const before = companyCount();
    const created = await writer.createCompany(ctx(), draft());
    expect(posts()).toBe(2);
    expect(companyCount()).toBe(before + 1);
    expect(sim.get(INSTANCE, 'companies', created.companyRef)?.name).toBe('Wide World Importers');
  });

  test('a 503 on the create is not resent (Pax8 may have made it): the caller reconciles', async () => {
    sim.faults.inject({ status: 503, times: 1, pathIncludes: '/v1/companies', method: 'POST' });
    await expect(writer.createCompany(ctx(), draft())).rejects.toMatchObject({ name: 'VendorHttpError', status: 503 });
    expect(posts()).toBe(1);
  });

  test('a dropped answer after Pax8 made the company: findCompany finds it', async () => {
    sim.faults.inject({ status: 0, times: 1, pathIncludes: '/v1/companies', method: 'POST', afterHandler: 'drop' });
    const before = companyCount();
    await expect(writer.createCompany(ctx(), draft())).rejects.toBeInstanceOf(VendorHttpError);
    expect(companyCount()).toBe(before + 1);
    const found = await writer.findCompany(ctx(), draft());
    expect(found?.native.name).toBe('Wide World Importers');
    expect(posts()).toBe(1);
  });

  test('Pax8\'s 422 (checkCompany bypassed, bad country) surfaces as field problems', async () => {
    const before = companyCount();
    const failing = writer.createCompany(ctx(), draft({ address: { ...draft().address!, country: 'usa' } }));
    await expect(failing).rejects.toBeInstanceOf(VendorValidationError);
    const err = (await failing.catch((e: unknown) => e)) as VendorValidationError;
    expect(err.vendorStatus).toBe(422);
    expect(err.problems).toEqual([{ field: 'address.country', message: expect.stringContaining('address.country') }]);
    expect(companyCount()).toBe(before);
  });

  test('several refusals from Pax8 map to our request fields', async () => {
    const err = (await writer.createCompany(ctx(), draft({
      phone: null, website: '', address: { ...draft().address!, postalCode: '', stateOrProvince: '' },
      contacts: [{ ...draft().contacts[0], email: 'nope' }],
    })).catch((e: unknown) => e)) as VendorValidationError;
    expect(err).toBeInstanceOf(VendorValidationError);
    expect(err.problems.map((p) => p.field).sort()).toEqual([
      'address.postal_code', 'address.state_or_province', 'contacts[0].email', 'phone', 'website',
    ]);
  });

  test('a flag of the wrong JSON type (Pax8\'s 400) is a field problem too', async () => {
    const bad = { ...draft(), selfServiceAllowed: 'yes' } as unknown as DistributorCompanyDraft;
    const err = (await writer.createCompany(ctx(), bad).catch((e: unknown) => e)) as VendorValidationError;
    expect(err).toBeInstanceOf(VendorValidationError);
    expect(err.vendorStatus).toBe(400);
    expect(err.problems.map((p) => p.field)).toEqual(['self_service_allowed']);
  });
});

describe('pax8 company writer: findCompany (reconcile)', () => {
  test('finds the company it created, and null for one never created', async () => {
    const created = await writer.createCompany(ctx(), draft());
    const found = await writer.findCompany(ctx(), draft());
    expect(found).toEqual({ companyRef: created.companyRef, native: sim.get(INSTANCE, 'companies', created.companyRef) });
    expect(await writer.findCompany(ctx(), draft({ name: 'Nobody Ltd' }))).toBeNull();
  });

  test('matches name plus phone and website exactly, or name plus externalId when given', async () => {
    await writer.createCompany(ctx(), draft({ externalId: 'WWI-1' }));
    expect(await writer.findCompany(ctx(), draft({ phone: '503-555-0000' }))).toBeNull();
    expect(await writer.findCompany(ctx(), draft({ website: 'https://other.example' }))).toBeNull();
    expect(await writer.findCompany(ctx(), draft({ name: 'wide world importers' }))).toBeNull();
    expect(await writer.findCompany(ctx(), draft({ externalId: 'WWI-1', phone: '503-555-0000' }))).not.toBeNull();
    expect(await writer.findCompany(ctx(), draft({ externalId: 'WWI-2' }))).toBeNull();
  });

  test('pages through the whole listing (size 200) to a company created last', async () => {
    sim.grow(INSTANCE, 'companies', 450);
    const created = await writer.createCompany(ctx(), draft());
    sim.faults.resetLog();
    const found = await writer.findCompany(ctx(), draft());
    expect(found?.companyRef).toBe(created.companyRef);
    const gets = sim.faults.requests.filter((r) => r.method === 'GET' && r.path === '/v1/companies');
    expect(gets).toHaveLength(Math.ceil(companyCount() / 200));
  });

  test('a created company is in the listing a later sync reads', async () => {
    const created = await writer.createCompany(ctx(), draft());
    const token = await (await fetch(`${server.url}/v1/token`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_id: 'sandbox', client_secret: 'sandbox-secret', audience: 'https://api.pax8.com', grant_type: 'client_credentials' }),
    })).json() as { access_token: string };
    const list = await (await fetch(`${server.url}/v1/companies?size=200`, { headers: { authorization: `Bearer ${token.access_token}` } })).json() as { content: { id: string }[] };
    expect(list.content.map((c) => c.id)).toContain(created.companyRef);
  });

  test('reconcile reads retry throttling (GET is safe to repeat)', async () => {
    await writer.createCompany(ctx(), draft());
    sim.faults.inject({ status: 429, times: 1, retryAfterSeconds: 0, pathIncludes: '/v1/companies', method: 'GET' });
    expect(await writer.findCompany(ctx(), draft())).not.toBeNull();
  });
});
