/**
 * Dates and cursors a client sends (docs/architecture.md, Reads): every date of a list filter or a write
 * body goes through one reader (src/shared/dates.ts), so a date outside years 0001-9999 UTC is a 422
 * HTTPValidationError naming it on every list and write, never a database error; and a cursor is bound to
 * the list, tenant and caller it was issued to, so any other cursor is a 422 naming `cursor`.
 */
import { startTestService, type TestService } from './support/service';

let svc: TestService;
let doc: any;
beforeAll(async () => {
  svc = await startTestService();
  doc = (await svc.api('/openapi.json', { key: null })).body;
}, 120_000);
afterAll(async () => { await svc?.close(); });

type Answer = { status: number; body: any };

/** The 422 HTTPValidationError of one parameter or body field. */
function expectRefused(res: Answer, where: 'query' | 'body', field: string, message: RegExp = /out of range/): void {
  expect(res.status).toBe(422);
  expect(res.body.detail).toEqual(expect.arrayContaining([expect.objectContaining({ loc: [where, field], msg: expect.stringMatching(message) })]));
}

const INSTANTS_OUT_OF_RANGE = [
  '0000-01-01T00:00:00Z', '10000-01-01T00:00:00Z', '+010000-01-01T00:00:00Z', '-000001-01-01T00:00:00Z',
  // Written inside 0001-9999, but outside it in UTC.
  '9999-12-31T23:59:59-00:01', '9999-12-31T20:00:00-23:59', '0001-01-01T00:00:00+14:00',
];
const INSTANTS_TAKEN = ['0001-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '9999-12-31T23:59:59.999999Z', '2026-11-22T10:00:00+13:45', '2026-11-22t10:00:00.123456789-09:30', '1970-01-01T00:00:00-12:00'];
const DAYS_OUT_OF_RANGE = ['0000-01-01', '10000-01-01', '0000-02-29'];

/** GET lists of the document with a date filter, each with a key that may read it on alpha. */
async function datedLists(): Promise<{ path: string; params: string[]; required: Record<string, string>; key: string }[]> {
  const out: { path: string; params: string[]; required: Record<string, string>; key: string }[] = [];
  for (const [template, methods] of Object.entries<any>(doc.paths)) {
    const params: any[] = methods.get?.parameters ?? [];
    const dated = params.filter((p) => p.in === 'query' && ['updated_since', 'period_start', 'period_end'].includes(p.name)).map((p) => p.name);
    if (!dated.length) continue;
    const path = template.replace('{tenant_id}', svc.alphaId);
    if (path.includes('{')) continue; // a list under another id (a webhook's deliveries): below, with a real id
    const required = Object.fromEntries(params.filter((p) => p.in === 'query' && p.required).map((p) => [p.name, p.name === 'period_start' ? '2026-01-01' : '2026-12-31']));
    const key = (await svc.api(`${path}?${new URLSearchParams({ ...required, limit: '1' })}`)).status === 200 ? svc.key : svc.alphaMspKey;
    expect((await svc.api(`${path}?${new URLSearchParams({ ...required, limit: '1' })}`, { key })).status).toBe(200);
    out.push({ path, params: dated, required, key });
  }
  return out;
}

describe('dates', () => {
  it('refuses a date out of range on every list with a date filter, naming it, and takes the extremes inside it', async () => {
    const lists = await datedLists();
    // The lists the interface names and the ones that answered 500 before (events, billing costs, minimums, charges).
    expect(lists.map((l) => l.path.split(`${svc.alphaId}/`)[1] ?? l.path)).toEqual(expect.arrayContaining([
      'tickets', 'devices', 'connections/events', 'billing/costs', 'billing/partner-minimums', 'charges', 'billing/reconciliation', 'audit',
    ]));
    for (const list of lists) {
      const get = (q: Record<string, string>) => svc.api(`${list.path}?${new URLSearchParams({ ...list.required, ...q })}`, { key: list.key });
      for (const param of list.params) {
        const instant = param === 'updated_since';
        for (const value of instant ? INSTANTS_OUT_OF_RANGE : DAYS_OUT_OF_RANGE) {
          const res = await get({ [param]: value });
          try { expectRefused(res, 'query', param); } catch (err) { throw new Error(`${list.path} ${param}=${value}: ${res.status} ${JSON.stringify(res.body)}`, { cause: err }); }
        }
        for (const value of instant ? INSTANTS_TAKEN : ['0001-01-01', '9999-12-31']) {
          // A period the list requires whole is given as that one day.
          const period: Record<string, string> = !instant && list.required[param] ? { period_start: value, period_end: value } : {};
          const res = await get({ [param]: value, ...period, limit: '1' });
          if (res.status !== 200) throw new Error(`${list.path} ${param}=${value}: ${res.status} ${JSON.stringify(res.body)}`);
        }
      }
    }
  }, 300_000);

  it('filters at the extremes as at any other time', async () => {
    const all = await svc.api(`/tenants/${svc.alphaId}/audit?limit=500`);
    const since = await svc.api(`/tenants/${svc.alphaId}/audit?limit=500&updated_since=0001-01-01T00:00:00Z`);
    expect(all.body.audit.length).toBeGreaterThan(0);
    expect(since.body.audit.map((e: any) => e.id)).toEqual(all.body.audit.map((e: any) => e.id));
    const late = await svc.api(`/tenants/${svc.alphaId}/audit?updated_since=${encodeURIComponent('9999-12-31T23:59:59+14:00')}`);
    expect(late.status).toBe(200);
    expect(late.body.audit).toEqual([]);
    const costs = await svc.api(`/tenants/${svc.alphaId}/billing/costs?period_start=9999-12-31`);
    expect(costs.status).toBe(200);
    expect(costs.body.costs).toEqual([]);
  });

  it('refuses a day out of range in every write body, naming it', async () => {
    const cost = {
      external_customer_ref: 'cust-1', product_source_id: 'p-1', period_start: '2026-11-01', period_end: '2026-11-30', actual_quantity: 1,
      billable_quantity: 1, currency: 'USD', msp_cost_unit: 1, msp_cost_extended: 1, dry_run: true,
    };
    const minimum = { product_source_id: 'p-1', period_start: '2026-11-01', period_end: '2026-11-30', currency: 'USD', minimum_amount: 1, dry_run: true };
    const line = { verb: 'add', product_source_id: '1', quantity: 1, dry_run: true };
    const writes: [string, Record<string, unknown>, string][] = [
      ['billing/costs', cost, 'period_start'], ['billing/costs', cost, 'period_end'],
      ['billing/partner-minimums', minimum, 'period_start'], ['billing/partner-minimums', minimum, 'period_end'],
      ['agreements/101/lines', line, 'effective_date'],
      ['agreements', { name: 'Managed services', company_name: 'Summit Dental Group', dry_run: true }, 'start_date'],
    ];
    for (const [path, body, field] of writes) {
      for (const value of DAYS_OUT_OF_RANGE) {
        const res = await svc.api(`/tenants/${svc.alphaId}/${path}`, { method: 'POST', json: { ...body, [field]: value } });
        try { expectRefused(res, 'body', field); } catch (err) { throw new Error(`${path} ${field}=${value}: ${res.status} ${JSON.stringify(res.body)}`, { cause: err }); }
      }
    }
    // The last day there is is a day like any other; a day that is no day stays the billing rules' 422 `validation`.
    const last = await svc.api(`/tenants/${svc.alphaId}/billing/costs`, { method: 'POST', json: { ...cost, period_start: '9999-12-01', period_end: '9999-12-31' } });
    expect(last.status).toBe(200);
    expect(last.body.cost).toMatchObject({ period_start: '9999-12-01', period_end: '9999-12-31' });
    const first = await svc.api(`/tenants/${svc.alphaId}/billing/costs`, { method: 'POST', json: { ...cost, period_start: '0001-01-01', period_end: '0001-01-31' } });
    expect(first.status).toBe(200);
    const notADay = await svc.api(`/tenants/${svc.alphaId}/billing/costs`, { method: 'POST', json: { ...cost, period_start: '2026-02-30' } });
    expect(notADay.status).toBe(422);
    expect(notADay.body.code).toBe('validation');
  });

  it('reads a question about a day out of range as a date it cannot read, never a 5xx', async () => {
    for (const question of ['How many tickets since 0000-01-01?', 'How many tickets before 9999-12-31?', 'How many tickets since 0001-01-01?']) {
      const res = await svc.api(`/tenants/${svc.alphaId}/ask`, { method: 'POST', json: { question } });
      expect(res.status).toBeLessThan(500);
    }
    const year0 = await svc.api(`/tenants/${svc.alphaId}/ask`, { method: 'POST', json: { question: 'How many tickets since 0000-01-01?' } });
    expect(JSON.stringify(year0.body)).toContain('not a date I can read');
  });
});

describe('cursors', () => {
  const tickets = (tenant: string) => `/tenants/${tenant}/tickets`;
  async function cursorOf(path: string, key = svc.key): Promise<string> {
    const res = await svc.api(`${path}${path.includes('?') ? '&' : '?'}limit=1`, { key });
    expect(res.status).toBe(200);
    expect(typeof res.body.next_cursor).toBe('string');
    return res.body.next_cursor;
  }
  const expectCursorRefused = (res: Answer) => expectRefused(res, 'query', 'cursor', /next_cursor/);

  it('pages with its own cursor', async () => {
    const cursor = await cursorOf(tickets(svc.alphaId));
    const next = await svc.api(`${tickets(svc.alphaId)}?limit=1&cursor=${cursor}`);
    expect(next.status).toBe(200);
    expect(next.body.tickets).toHaveLength(1);
  });

  it('refuses another tenant\'s cursor, another list\'s and another caller\'s', async () => {
    const alphaTickets = await cursorOf(tickets(svc.alphaId));
    // The same list of another tenant the same key sees.
    expectCursorRefused(await svc.api(`${tickets(svc.betaId)}?cursor=${alphaTickets}`));
    // Another list of the same tenant, whose keys have the same shape (a uuid).
    expectCursorRefused(await svc.api(`/tenants/${svc.alphaId}/devices?cursor=${alphaTickets}`));
    // The same list and tenant, another caller: the MSP's own key.
    expectCursorRefused(await svc.api(`${tickets(svc.alphaId)}?cursor=${alphaTickets}`, { key: svc.alphaMspKey }));
    // And the other way round: the MSP's cursor is not the ISV's.
    const mspCursor = await cursorOf(tickets(svc.alphaId), svc.alphaMspKey);
    expectCursorRefused(await svc.api(`${tickets(svc.alphaId)}?cursor=${mspCursor}`));
    expect((await svc.api(`${tickets(svc.alphaId)}?cursor=${mspCursor}`, { key: svc.alphaMspKey })).status).toBe(200);
    // The audit log: its positions are whole numbers in every tenant; beta's cursor is not alpha's.
    const betaAudit = await cursorOf(`/tenants/${svc.betaId}/audit`);
    expectCursorRefused(await svc.api(`/tenants/${svc.alphaId}/audit?cursor=${betaAudit}`));
    expect((await svc.api(`/tenants/${svc.betaId}/audit?cursor=${betaAudit}`)).status).toBe(200);
  });

  it('refuses a tampered cursor: another position under the same seal, a changed seal, no seal', async () => {
    const issued = await cursorOf(tickets(svc.alphaId));
    const [list, position, seal] = JSON.parse(Buffer.from(issued, 'base64url').toString('utf8'));
    const second = await svc.api(`${tickets(svc.alphaId)}?limit=1&cursor=${issued}`);
    const otherId: string = second.body.tickets[0].id;
    expect(otherId).not.toBe(position);
    const encode = (v: unknown[]) => Buffer.from(JSON.stringify(v), 'utf8').toString('base64url');
    const flipped = `${seal.slice(0, -1)}${seal.endsWith('A') ? 'B' : 'A'}`;
    for (const cursor of [encode([list, otherId, seal]), encode([list, position, flipped]), encode([list, position]), encode([list, position, seal, seal]), `${issued}x`]) {
      expectCursorRefused(await svc.api(`${tickets(svc.alphaId)}?cursor=${cursor}`));
    }
    expect((await svc.api(`${tickets(svc.alphaId)}?cursor=${encode([list, position, seal])}`)).status).toBe(200);
  });
});
