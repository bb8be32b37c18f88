/**
 * The Kaseya BMS simulator is as strict as BMS API 2.0: refusals in the envelope at 200, bodies bound by
 * their input schema (an unknown member, a missing required one, a wrong type), ids that name nothing,
 * ASP.NET's bare 401, and the published 1,500 requests an hour per endpoint.
 */
import { startStandalone } from '../kit';
import { loadVendorFixtures } from '../../sandbox/fixtures';
import { createKaseyaBmsSimulator, type KaseyaBmsSimulator } from './simulator';

let sim: KaseyaBmsSimulator;
let server: { url: string; close: () => Promise<void> };
let token = '';
let clock = Date.parse('2026-11-20T09:00:00Z');

beforeAll(async () => {
  sim = createKaseyaBmsSimulator({ now: () => clock });
  sim.seed('sandbox-gamma', loadVendorFixtures('sandbox-gamma', 'kaseyabms').resources);
  server = await startStandalone(sim);
  token = (await signIn('sandbox', 'sandbox-secret')).Result.AccessToken;
});
afterAll(async () => { await server.close(); });

async function signIn(user: string, password: string, tenant = 'SANDBOX-GAMMA'): Promise<any> {
  const res = await fetch(`${server.url}/v2/security/authenticate`, {
    method: 'POST', body: new URLSearchParams({ GrantType: 'password', UserName: user, Password: password, Tenant: tenant }),
  });
  expect(res.status).toBe(200);
  return res.json();
}

async function api(method: string, path: string, body?: unknown, bearer = token): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}${path}`, {
    method, headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

const ticket = (over: Record<string, unknown> = {}) => ({
  Title: 'New laptop', Details: 'For the new starter', AccountId: 201, LocationId: 3001, OpenDate: '2026-11-20T09:00:00', PriorityId: 2, SourceId: 4,
  StatusId: 1, TypeId: 1, ...over,
});

describe('sign-in', () => {
  it('answers TokenOutputDto in the envelope, and a wrong password or company as Success=false at 200', async () => {
    const ok = await signIn('sandbox', 'sandbox-secret');
    expect(ok).toMatchObject({ Success: true, Error: null, Result: { AccessToken: expect.any(String), RefreshToken: expect.any(String), AccessTokenExpireOn: '2026-11-20T10:00:00.000Z' } });
    expect(await signIn('sandbox', 'wrong')).toMatchObject({ Success: false, Result: null, Error: { Message: 'Invalid username, password or company name.' } });
    expect((await signIn('sandbox', 'sandbox-secret', 'OTHER')).Success).toBe(false);
  });

  it('a multipart form signs in too; a missing or unknown token is a bare 401', async () => {
    const form = new FormData();
    for (const [k, v] of Object.entries({ GrantType: 'password', UserName: 'sandbox', Password: 'sandbox-secret', Tenant: 'SANDBOX-GAMMA' })) form.append(k, v);
    const res = await fetch(`${server.url}/v2/security/authenticate`, { method: 'POST', body: form });
    expect((await res.json() as any).Success).toBe(true);
    expect(await api('GET', '/v2/system/statuses/lookup', undefined, 'nope')).toEqual({ status: 401, body: null });
  });
});

describe('writes', () => {
  it('creates a ticket bound by TicketInputDto and answers TicketOutputDto', async () => {
    const res = await api('POST', '/v2/servicedesk/tickets', ticket());
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ Success: true, Result: { Title: 'New laptop', AccountName: 'Northwind Logistics', StatusName: 'New', LocationName: 'Head Office' } });
    // The answer carries the DTO's members only (no simulator bookkeeping).
    expect(Object.keys(res.body.Result)).not.toContain('TicketId');
  });

  it.each([
    [{ Marker: 'x' }, "Could not find member 'Marker'"],
    [{ Title: undefined }, 'The Title field is required.'],
    [{ AccountId: '201' }, "Error converting value \"201\" to type 'Int32'"],
    [{ LocationId: 3003 }, 'Location 3003 does not belong to account 201.'],
    [{ StatusId: 99 }, 'Status 99 does not exist.'],
    [{ AccountId: 0 }, 'The field AccountId must be between 1 and 2147483647.'],
    [{ PriorityId: -3 }, 'The field PriorityId must be between 1 and 2147483647.'],
    [{ AccountId: 2147483648 }, 'JSON integer 2147483648 is too large or small for an Int32.'],
    [{ Title: '   ' }, 'The Title field is required.'],
    [{ Details: ' \t\n' }, 'The Details field is required.'],
  ])('refuses %j in the envelope at 200', async (over, message) => {
    const before = sim.list('sandbox-gamma', 'tickets').length;
    const res = await api('POST', '/v2/servicedesk/tickets', ticket(over));
    expect(res.status).toBe(200);
    expect(res.body.Success).toBe(false);
    expect([res.body.Error.Message, ...res.body.Error.SubErrors].join(' ')).toContain(message);
    expect(sim.list('sandbox-gamma', 'tickets')).toHaveLength(before);
  });

  it.each([
    [{ op: 'replace', path: '/Details', value: 5 }, "Error converting value 5 to type 'String'. Path 'Details'."],
    [{ op: 'replace', path: '/DueDate', value: 'junk' }, "Error converting value \"junk\" to type 'String'. Path 'DueDate'."],
    [{ op: 'replace', path: '/StatusId', value: 'open' }, "Error converting value \"open\" to type 'Int32'. Path 'StatusId'."],
    [{ op: 'replace', path: '/QueueId', value: 0 }, 'The field QueueId must be between 1 and 2147483647.'],
    [{ op: 'replace', path: '/Title', value: null }, 'The value null is not valid for Title.'],
  ])('a JSON Patch value is bound to its TicketInputDto member: %j is refused in the envelope', async (op, message) => {
    const before = sim.get('sandbox-gamma', 'tickets', 7001);
    const res = await api('PATCH', '/v2/servicedesk/tickets/7001', [op]);
    expect(res.status).toBe(200);
    expect(res.body.Success).toBe(false);
    expect([res.body.Error.Message, ...res.body.Error.SubErrors].join(' ')).toContain(message);
    expect(sim.get('sandbox-gamma', 'tickets', 7001)).toEqual(before);
  });

  it('a JSON Patch replaces documented members only; a completed status stamps CompletedDate', async () => {
    expect((await api('PATCH', '/v2/servicedesk/tickets/7001', [{ op: 'replace', path: '/TenantId', value: 2 }])).body.Success).toBe(false);
    const done = await api('PATCH', '/v2/servicedesk/tickets/7001', [{ op: 'replace', path: '/StatusId', value: 5 }]);
    expect(done.body.Result).toMatchObject({ StatusId: 5, StatusName: 'Completed', CompletedDate: expect.any(String) });
  });

  it('a time log must end after it starts; the limited user may not write', async () => {
    const log = { StartDate: '2026-11-20', StartTime: '10:00:00', EndTime: '09:00:00', WorkTypeId: 1, RoleId: 1 };
    expect((await api('POST', '/v2/servicedesk/tickets/7002/timelogs', log)).body.Error.Message).toBe('The end time must be later than the start time.');
    // Seconds count: half a minute is a span.
    expect((await api('POST', '/v2/servicedesk/tickets/7002/timelogs', { ...log, StartTime: '10:00:00', EndTime: '10:00:30' })).body.Success).toBe(true);
    // A time of day: hours past 23, minutes or seconds past 59 are no date-span BMS binds.
    for (const [StartTime, EndTime] of [['24:00:00', '24:30:00'], ['10:60:00', '11:00:00'], ['10:00:00', '10:30:60'], ['-1:00', '02:00']]) {
      const res = await api('POST', '/v2/servicedesk/tickets/7002/timelogs', { ...log, StartTime, EndTime });
      expect(res.body.Success).toBe(false);
      expect([res.body.Error.Message, ...res.body.Error.SubErrors].join(' ')).toMatch(/Error converting value/);
    }
    const limited = (await signIn('sandbox-limited', 'sandbox-secret')).Result.AccessToken;
    const refused = await api('POST', '/v2/servicedesk/tickets/7002/notes', { Details: 'x', IsInternal: true, TypeId: 1, NoteDate: '2026-11-20T09:00:00' }, limited);
    expect(refused.body).toMatchObject({ Success: false, Error: { Code: 403 } });
  });

  it('recurring services go only on an active recurring-services contract, in whole units', async () => {
    const line = { ServiceId: 33, Units: 2, UnitCost: 22, UnitPrice: 26.4, EffectiveDate: '2026-12-01T00:00:00', SortOrder: 0 };
    expect((await api('POST', '/v2/finance/contracts/recurringservices/801/services', [line])).body.Result).toMatchObject({ ServiceId: 33, ContractId: 801, TotalPrice: 52.8 });
    expect((await api('POST', '/v2/finance/contracts/recurringservices/803/services', [line])).body.Success).toBe(false);
    expect((await api('POST', '/v2/finance/contracts/recurringservices/801/services', [{ ...line, Units: 1.5 }])).body.Success).toBe(false);
    const huge = await api('POST', '/v2/finance/contracts/recurringservices/801/services', [{ ...line, Units: 2147483648 }]);
    expect(huge.body.Error.SubErrors.join(' ')).toContain('JSON integer 2147483648 is too large or small for an Int32.');
  });
});

describe('reads', () => {
  it('pages with PageSize and PageNumber and says TotalRecords', async () => {
    const first = await api('GET', '/v2/servicedesk/tickets?PageSize=5&PageNumber=1');
    const third = await api('GET', '/v2/servicedesk/tickets?PageSize=5&PageNumber=3');
    expect(first.body.Result).toHaveLength(5);
    expect(first.body.TotalRecords).toBe(sim.list('sandbox-gamma', 'tickets').length);
    expect(third.body.Result.length).toBe(first.body.TotalRecords - 10);
  });
});

describe('limits', () => {
  it('answers 429 with Retry-After past 1,500 requests an hour on one endpoint, and another endpoint still answers', async () => {
    for (let i = 0; i < 1500; i++) {
      const r = await api('GET', '/v2/system/priorities/lookup');
      if (r.status !== 200) throw new Error(`request ${i} answered ${r.status}`);
    }
    const res = await fetch(`${server.url}/v2/system/priorities/lookup`, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await api('GET', '/v2/system/queues/lookup')).status).toBe(200);
    clock += 3_600_001;
    token = (await signIn('sandbox', 'sandbox-secret')).Result.AccessToken;
    expect((await api('GET', '/v2/system/priorities/lookup')).status).toBe(200);
  }, 60_000);
});
