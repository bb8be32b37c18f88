/**
 * The write rules every PSA connector keeps, one table over the sandbox tenants' PSAs: a ticket create
 * without its grant is refused before anything is sent; a preview sends nothing; a commit lands once per
 * idempotency key, also when the same key arrives twice at once, and a replay answers the first commit;
 * a throttled create lands once; text no vendor holds is refused before anything is sent;
 * a vendor rule (an unknown company) is refused with its field before any write; a ticket of one tenant
 * is not found through another.
 */
import { startTestService, type TestService } from './support/service';

let svc: TestService;
beforeAll(async () => { svc = await startTestService(); }, 120_000);
afterAll(async () => { await svc?.close(); });

type Sim = { list(tenant: string, resource: string): unknown[] };
const sim = (vendor: string) => (svc.services.simulators as unknown as Record<string, Sim>)[vendor];
const uniqueName = (rows: any[], name: (r: any) => string, usable: (r: any) => boolean = () => true) => {
  const counts = new Map<string, number>();
  for (const r of rows) counts.set(name(r), (counts.get(name(r)) ?? 0) + 1);
  return name(rows.find((r) => usable(r) && counts.get(name(r)) === 1));
};

interface Psa {
  connector: string; slug: string; createPath: string; tenant: () => string; otherTenant: () => string; company: () => string;
  /** The longest ticket summary the vendor documents (null: it documents none). */
  summaryMax: number | null;
}
const PSAS: Psa[] = [
  { connector: 'connectwise', slug: 'sandbox-alpha', createPath: '/service/tickets', summaryMax: 100, tenant: () => svc.alphaId, otherTenant: () => svc.betaId,
    company: () => uniqueName(sim('connectwise').list('sandbox-alpha', 'companies'), (c) => c.name) },
  { connector: 'halopsa', slug: 'sandbox-beta', createPath: '/api/Tickets', summaryMax: null, tenant: () => svc.betaId, otherTenant: () => svc.gammaId,
    company: () => uniqueName(sim('halopsa').list('sandbox-beta', 'clients'), (c) => c.name, (c) => c.inactive !== true) },
  { connector: 'kaseyabms', slug: 'sandbox-gamma', createPath: '/v2/servicedesk/tickets', summaryMax: 255, tenant: () => svc.gammaId, otherTenant: () => svc.alphaId,
    company: () => uniqueName(sim('kaseyabms').list('sandbox-gamma', 'accounts'), (a) => a.AccountName, (a) => a.IsActive !== false) },
];
let seq = 0;
const newKey = (p: Psa) => `rules-${p.connector}-${seq++}`;

describe.each(PSAS)('ticket create rules on $connector', (p) => {
  const tickets = () => sim(p.connector).list(p.slug, 'tickets').length;
  const post = (json: Record<string, unknown>, key?: string) =>
    svc.api(`/tenants/${p.tenant()}/tickets`, { method: 'POST', json, ...(key ? { key } : {}) });

  it('without psa.ticket.create the ISV is refused with grant_missing and nothing reaches the vendor', async () => {
    const isv = (await svc.graphql('mutation($n: String!) { create_isv(name: $n) { id } }', { n: `Rules ISV ${p.connector}` })).data.create_isv.id;
    const key = (await svc.graphql('mutation($id: ID!) { issue_api_key(isv_id: $id) { key } }', { id: isv })).data.issue_api_key.key;
    const conn = (await svc.services.ds.query('SELECT id FROM connections WHERE tenant_id = $1 AND connector = $2', [p.tenant(), p.connector]))[0].id;
    await svc.graphql('mutation($i: ID!, $c: ID!, $k: [String!]!) { set_grant(isv_id: $i, connection_id: $c, keys: $k) { id } }', { i: isv, c: conn, k: ['psa.ticket.update'] });
    const before = tickets();
    const res = await post({ company_name: p.company(), summary: 'No grant', dry_run: false, idempotency_key: newKey(p) }, key);
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'grant_missing', needed: 'psa.ticket.create' });
    expect(tickets()).toBe(before);
  });

  it('a preview sends nothing and names the request it would send', async () => {
    const before = tickets();
    const res = await post({ company_name: p.company(), summary: 'Preview only' });
    expect(res.status).toBe(200);
    expect(res.body.preview.targets[0].requests.some((r: any) => r.method === 'POST')).toBe(true);
    expect(tickets()).toBe(before);
  });

  it('one key lands one ticket, also when it arrives twice at once, and a replay answers the first commit', async () => {
    const before = tickets();
    const json = { company_name: p.company(), summary: `Once only on ${p.connector}`, dry_run: false, idempotency_key: newKey(p) };
    const [a, b] = await Promise.all([post(json), post(json)]);
    const done = [a, b].filter((r) => r.status === 201);
    expect(done.length).toBeGreaterThanOrEqual(1);
    for (const r of [a, b]) expect([201, 409]).toContain(r.status);
    const replay = await post(json);
    expect(replay.status).toBe(201);
    expect(replay.body.ticket_ref).toBe(done[0].body.ticket_ref);
    expect(tickets()).toBe(before + 1);
  });

  const control = (path: string, body?: unknown) => fetch(`${svc.url}/sandbox-vendors/${p.connector}/_control/faults${path}`, {
    method: body ? 'POST' : 'DELETE', headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.config.adminToken}` }, ...(body ? { body: JSON.stringify(body) } : {}) });

  it('a create throttled twice (429 with Retry-After) lands one ticket once the vendor lets it through', async () => {
    expect((await control('', { status: 429, times: 2, retryAfterSeconds: 1, pathIncludes: p.createPath, method: 'POST' })).status).toBe(204);
    try {
      const before = tickets();
      const res = await post({ company_name: p.company(), summary: `Throttled on ${p.connector}`, dry_run: false, idempotency_key: newKey(p) });
      expect(res.status).toBe(201);
      expect(res.body.results[0].ticket_ref).toEqual(expect.any(String));
      expect(tickets()).toBe(before + 1);
    } finally { await control(''); }
  }, 60_000);

  it('text no vendor can hold (NUL, a lone surrogate, past the length limits) is refused naming summary, and nothing is sent', async () => {
    const before = tickets();
    const tooLong = p.summaryMax == null ? [] : ['x'.repeat(p.summaryMax + 1)];
    for (const summary of ['Printer\u0000jams', 'Printer \ud800 jams', 'x'.repeat(1_001), ...tooLong]) {
      const res = await post({ company_name: p.company(), summary, dry_run: false, idempotency_key: newKey(p) });
      expect(res.status).toBe(422);
      expect(JSON.stringify(res.body)).toContain('summary');
    }
    expect(tickets()).toBe(before);
  });

  it('a create the vendor made while its answer was lost ends with one ticket, found again by its marker', async () => {
    await control('', { status: 200, times: 1, pathIncludes: p.createPath, method: 'POST', afterHandler: 'drop' });
    try {
      const before = tickets();
      const res = await post({ company_name: p.company(), summary: `Answer lost on ${p.connector}`, dry_run: false, idempotency_key: newKey(p) });
      expect(res.status).toBe(201);
      expect(res.body.results[0].reconciled).toBe(true);
      expect(tickets()).toBe(before + 1);
    } finally { await control(''); }
  }, 60_000);

  it('an unknown company is refused with its field before any write', async () => {
    const before = tickets();
    const res = await post({ company_name: 'No Such Company Ltd', summary: 'Nowhere', dry_run: false, idempotency_key: newKey(p) });
    expect(res.status).toBe(422);
    expect(JSON.stringify(res.body)).toContain('company_name');
    expect(tickets()).toBe(before);
  });

  it("a ticket of this tenant is not found through another tenant", async () => {
    const mine = (await svc.api(`/tenants/${p.tenant()}/tickets?limit=1`)).body.tickets[0];
    const res = await svc.api(`/tenants/${p.otherTenant()}/tickets/${encodeURIComponent(mine.id)}`);
    expect(res.status).toBe(404);
  });
});
