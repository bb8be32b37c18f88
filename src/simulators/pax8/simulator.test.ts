import { startStandalone } from '../kit';
import { createPax8Simulator, type Pax8Simulator } from './simulator';
import { readPax8Fixtures } from './test-fixtures';

const INSTANCE = 'sandbox-alpha';
const fixtures = readPax8Fixtures();
const fixtureCompanies = fixtures.companies as { id: string; name: string; status: string }[];
const fixtureContacts = fixtures.contacts as { id: string; companyId: string }[];

let sim: Pax8Simulator;
let server: { url: string; close: () => Promise<void> };
let api: string;
let token: string;

async function call(method: string, path: string, body?: unknown, auth: string | null = `Bearer ${token}`) {
  const headers: Record<string, string> = {};
  if (auth) headers.authorization = auth;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${api}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}

async function getToken(clientId = 'sandbox', clientSecret = 'sandbox-secret') {
  return call('POST', '/token', {
    client_id: clientId, client_secret: clientSecret, audience: 'https://api.pax8.com', grant_type: 'client_credentials',
  }, null);
}

/** The field each Pax8 error detail names (its message starts with it). */
const named = (details: { message: string }[]) => details.map((d) => d.message.split(':')[0]);

const validCompany = () => ({
  name: 'Margie\'s Travel',
  address: { street: '14 Harbour Rd', city: 'San Diego', stateOrProvince: 'CA', postalCode: '92101', country: 'US' },
  phone: '619-555-0148',
  website: 'https://www.margiestravel.com',
  externalId: 'MargiesTravel',
  billOnBehalfOfEnabled: false,
  selfServiceAllowed: true,
  orderApprovalRequired: false,
});

beforeAll(async () => {
  sim = createPax8Simulator();
  server = await startStandalone(sim);
  api = `${server.url}/v1`;
  const t = await getToken();
  token = t.body.access_token;
});
beforeEach(() => {
  sim.reset();
  sim.seed(INSTANCE, fixtures);
  sim.faults.clear();
});
afterAll(() => server.close());

describe('pax8 simulator: token and auth', () => {
  test('client credentials give a 24 h bearer token', async () => {
    const res = await getToken();
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ access_token: expect.any(String), token_type: 'Bearer', expires_in: 86400 });
  });

  test('wrong secret or unknown client is refused with 401', async () => {
    for (const [id, secret] of [['sandbox', 'nope'], ['someone', 'sandbox-secret']]) {
      const res = await getToken(id, secret);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'access_denied', error_description: 'Unauthorized' });
    }
  });

  test('the legacy audience api://p8p.client still gets a partner token', async () => {
    const res = await call('POST', '/token', { client_id: 'sandbox', client_secret: 'sandbox-secret', audience: 'api://p8p.client', grant_type: 'client_credentials' }, null);
    expect(res.status).toBe(200);
    const list = await call('GET', '/companies', undefined, `Bearer ${res.body.access_token}`);
    expect(list.status).toBe(200);
  });

  test('an unknown audience (or one for the vendor APIs) gets no token', async () => {
    for (const audience of ['api://other', 'api://usage', 'https://api.pax8.com/', '']) {
      const res = await call('POST', '/token', { client_id: 'sandbox', client_secret: 'sandbox-secret', audience, grant_type: 'client_credentials' }, null);
      expect(res.status).toBe(403);
      expect(res.body.access_token).toBeUndefined();
    }
    const none = await call('POST', '/token', { client_id: 'sandbox', client_secret: 'sandbox-secret', grant_type: 'client_credentials' }, null);
    expect(none.status).toBe(403);
  });

  test('a wrong audience or grant type gets no token', async () => {
    const aud = await call('POST', '/token', { client_id: 'sandbox', client_secret: 'sandbox-secret', audience: 'api://other', grant_type: 'client_credentials' }, null);
    expect(aud.status).toBe(403);
    const grant = await call('POST', '/token', { client_id: 'sandbox', client_secret: 'sandbox-secret', audience: 'https://api.pax8.com', grant_type: 'password' }, null);
    expect(grant.status).toBe(403);
    expect(grant.body.access_token).toBeUndefined();
  });

  test('API calls without a valid bearer token get Pax8\'s 401 error body', async () => {
    for (const auth of [null, 'Bearer not-a-token', 'Basic c2FuZGJveDpzYW5kYm94LXNlY3JldA==']) {
      const res = await call('GET', '/companies', undefined, auth);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ type: 'UNAUTHORIZED', message: expect.any(String), instance: '/v1/companies', status: 401, details: [] });
    }
  });

  test('the sandbox client reads the sandbox-alpha dataset', async () => {
    const res = await call('GET', '/companies?size=200');
    expect(res.status).toBe(200);
    expect(res.body.content.map((c: { name: string }) => c.name).sort()).toEqual(fixtureCompanies.map((c) => c.name).sort());
  });
});

describe('pax8 simulator: lists', () => {
  test('pages of companies are complete and disjoint, with Spring-style page metadata', async () => {
    const size = 5;
    const first = await call('GET', `/companies?page=0&size=${size}`);
    expect(first.body.page).toEqual({ size, totalElements: fixtureCompanies.length, totalPages: Math.ceil(fixtureCompanies.length / size), number: 0 });
    const ids: string[] = [];
    for (let page = 0; page < first.body.page.totalPages; page++) {
      const res = await call('GET', `/companies?page=${page}&size=${size}`);
      expect(res.body.page.number).toBe(page);
      ids.push(...res.body.content.map((c: { id: string }) => c.id));
    }
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.sort()).toEqual(fixtureCompanies.map((c) => c.id).sort());
    const past = await call('GET', `/companies?page=${first.body.page.totalPages}&size=${size}`);
    expect(past.body.content).toEqual([]);
  });

  test('size is capped at 200 and defaults to 10', async () => {
    sim.grow(INSTANCE, 'companies', 450);
    const big = await call('GET', '/companies?size=1000');
    expect(big.body.content).toHaveLength(200);
    expect(big.body.page).toMatchObject({ size: 200, totalElements: 462, totalPages: 3 });
    const dflt = await call('GET', '/companies');
    expect(dflt.body.content).toHaveLength(10);
  });

  test('growing by 50,000 companies pages to the end', async () => {
    sim.grow(INSTANCE, 'companies', 50_000);
    const total = fixtureCompanies.length + 50_000;
    const last = await call('GET', `/companies?page=${Math.ceil(total / 200) - 1}&size=200`);
    expect(last.body.page.totalElements).toBe(total);
    expect(last.body.content).toHaveLength(total % 200 || 200);
    expect(last.body.content.at(-1).name).toBe('Synthetic Customer 050012');
  });

  test('companies filter and sort as Pax8 documents', async () => {
    const inactive = await call('GET', '/companies?status=Inactive');
    expect(inactive.body.content.map((c: { name: string }) => c.name)).toEqual(
      fixtureCompanies.filter((c) => c.status === 'Inactive').map((c) => c.name));
    const sorted = await call('GET', '/companies?size=200&sort=name,desc');
    const names = sorted.body.content.map((c: { name: string }) => c.name);
    expect(names).toEqual([...names].sort((a: string, b: string) => b.localeCompare(a)));
    const badSort = await call('GET', '/companies?sort=updatedDate,desc');
    expect(badSort.status).toBe(400);
    expect(badSort.body.type).toBe('BAD_REQUEST');
  });

  test('a company, its contacts, products and subscriptions are readable', async () => {
    const withContacts = fixtureContacts[0].companyId;
    const company = await call('GET', `/companies/${withContacts}`);
    expect(company.body).toEqual(fixtureCompanies.find((c) => c.id === withContacts));
    const contacts = await call('GET', `/companies/${withContacts}/contacts?size=200`);
    const expected = fixtureContacts.filter((c) => c.companyId === withContacts).map(({ companyId: _c, ...rest }) => rest);
    expect(contacts.body.content).toEqual(expected);
    expect(contacts.body.content[0]).not.toHaveProperty('companyId');

    const products = await call('GET', '/products?size=200');
    expect(products.body.page.totalElements).toBe(fixtures.products.length);
    expect(products.body.content.some((p: { name: string }) => p.name === 'Microsoft 365 Business Premium')).toBe(true);

    const subs = await call('GET', `/subscriptions?companyId=${withContacts}&size=200`);
    const fixtureSubs = (fixtures.subscriptions as { companyId: string }[]).filter((s) => s.companyId === withContacts);
    expect(subs.body.content).toEqual(fixtureSubs);
    expect(subs.body.content[0]).toEqual(expect.objectContaining({
      productId: expect.any(String), quantity: expect.any(Number), price: expect.any(Number),
      partnerCost: expect.any(Number), billingTerm: expect.any(String), status: expect.any(String), startDate: expect.any(String),
    }));
  });

  test('an unknown company is Pax8\'s 404', async () => {
    const res = await call('GET', '/companies/3d0617ac-57f6-40e3-951d-e91da47a326b');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({
      type: 'NOT_FOUND', message: 'Company Not Found: 3d0617ac-57f6-40e3-951d-e91da47a326b',
      instance: '/v1/companies/3d0617ac-57f6-40e3-951d-e91da47a326b', status: 404, details: [],
    });
    expect((await call('GET', '/companies/3d0617ac-57f6-40e3-951d-e91da47a326b/contacts')).status).toBe(404);
  });
});

describe('pax8 simulator: creating companies and contacts', () => {
  test('a company without address is refused with 422 naming the field', async () => {
    const { address: _a, ...body } = validCompany();
    const res = await call('POST', '/companies', body);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ type: 'UNPROCESSABLE_ENTITY', message: 'Invalid Company', instance: '/v1/companies', status: 422 });
    // Pax8's ErrorDetail is {type, message, instance, status}: the field is named in the message only.
    expect(res.body.details).toEqual([{ type: 'INVALID_PARAM', status: 422, message: expect.stringMatching(/^address: /) }]);
    expect((await call('GET', '/companies?size=200')).body.page.totalElements).toBe(fixtureCompanies.length);
  });

  test('a country that is not two capital letters is refused', async () => {
    for (const country of ['usa', 'us', 'USA']) {
      const body = validCompany();
      body.address.country = country;
      const res = await call('POST', '/companies', body);
      expect(res.status).toBe(422);
      expect(named(res.body.details)).toEqual(['address.country']);
    }
  });

  test('every missing required field is reported at once', async () => {
    const res = await call('POST', '/companies', { name: 'Half a company', address: { city: 'Reno' } });
    expect(res.status).toBe(422);
    expect(named(res.body.details).sort()).toEqual([
      'address.country', 'address.postalCode', 'address.stateOrProvince', 'address.street',
      'billOnBehalfOfEnabled', 'orderApprovalRequired', 'phone', 'selfServiceAllowed', 'website',
    ]);
  });

  test('a value of the wrong JSON type is a 400, malformed JSON too', async () => {
    const res = await call('POST', '/companies', { ...validCompany(), billOnBehalfOfEnabled: 'yes' });
    expect(res.status).toBe(400);
    expect(named(res.body.details)).toEqual(['billOnBehalfOfEnabled']);
    expect(res.body.details[0]).not.toHaveProperty('field');
    const raw = await fetch(`${api}/companies`, {
      method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{"name": ',
    });
    expect(raw.status).toBe(400);
    expect(await raw.json()).toMatchObject({ type: 'BAD_REQUEST', status: 400, instance: '/v1/companies' });
  });

  test('a valid company is created Inactive, listed, and activated by its first contact', async () => {
    const created = await call('POST', '/companies', validCompany());
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ ...validCompany(), id: expect.any(String), status: 'Inactive', updatedDate: expect.any(String) });
    const id = created.body.id;
    expect((await call('GET', `/companies/${id}`)).body).toEqual(created.body);

    const badContact = await call('POST', `/companies/${id}/contacts`, { firstName: 'Ann', lastName: 'Lee', email: 'not-an-email', phone: '555' });
    expect(badContact.status).toBe(422);
    expect(named(badContact.body.details)).toEqual(['email']);

    const contact = await call('POST', `/companies/${id}/contacts`, {
      firstName: 'Ann', lastName: 'Lee', email: 'ann.lee@margiestravel.com', phone: '619-555-0101',
      types: [{ type: 'Admin', primary: true }],
    });
    expect(contact.status).toBe(200);
    expect(contact.body).toMatchObject({ id: expect.any(String), firstName: 'Ann', createdDate: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/) });
    const after = await call('GET', `/companies/${id}`);
    expect(after.body.status).toBe('Active');
    expect(Date.parse(after.body.updatedDate)).toBeGreaterThan(Date.parse(created.body.updatedDate));
    expect((await call('GET', `/companies/${id}/contacts`)).body.content).toEqual([contact.body]);
  });

  test('contacts in the company body are created with it and make it Active', async () => {
    const res = await call('POST', '/companies', {
      ...validCompany(),
      contacts: [{ firstName: 'Raj', lastName: 'Rao', email: 'raj@margiestravel.com', phone: '619-555-0102', types: [{ type: 'Billing', primary: true }] }],
    });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('Active');
    expect(res.body).not.toHaveProperty('contacts');
    const contacts = await call('GET', `/companies/${res.body.id}/contacts`);
    expect(contacts.body.content.map((c: { email: string }) => c.email)).toEqual(['raj@margiestravel.com']);
  });
});

describe('pax8 simulator: programmatic API', () => {
  test('update changes a company as the portal would and bumps updatedDate', async () => {
    const target = fixtureCompanies[2];
    const updated = sim.update(INSTANCE, 'companies', target.id, { name: 'Fabrikam Incorporated', address: { city: 'Dallas' } });
    expect(updated.address.city).toBe('Dallas');
    expect(updated.address.street).toBe((fixtures.companies[2] as { address: { street: string } }).address.street);
    const seen = await call('GET', `/companies/${target.id}`);
    expect(seen.body).toEqual(updated);
    expect(seen.body.name).toBe('Fabrikam Incorporated');
    expect(Date.parse(seen.body.updatedDate)).toBeGreaterThan(Date.parse((fixtures.companies[2] as { updatedDate: string }).updatedDate));
  });

  test('get/list/create agree with the HTTP API', async () => {
    const company = sim.create(INSTANCE, 'companies', validCompany());
    const contact = sim.create(INSTANCE, 'contacts', { companyId: company.id, firstName: 'Lia', lastName: 'Ng', email: 'lia@margiestravel.com', phone: '619-555-0103' });
    expect(sim.get(INSTANCE, 'companies', company.id)?.status).toBe('Active');
    expect(sim.companyOfContact(INSTANCE, contact.id)).toBe(company.id);
    expect(sim.list(INSTANCE, 'contacts', { companyId: company.id })).toEqual([contact]);
    expect(sim.list(INSTANCE, 'contacts')).toHaveLength(fixtureContacts.length + 1);
    expect((await call('GET', `/companies/${company.id}/contacts`)).body.content).toEqual([contact]);
    expect(() => sim.create(INSTANCE, 'companies', { name: 'No address' })).toThrow(/address/);
  });
});
