/**
 * Companies, contacts and identity over HTTP against the simulators (interface document rules 10-12,
 * docs/architecture.md, Companies, contacts and identity; Distributor): company create matches first and never creates in the PSA; the
 * distributor create matches then creates once; contacts are list and match only; the ISV book
 * auto-matches exact unique names only; each decision moves its row as rule 11 says; import previews
 * without calling the ISV, commits once per key through a signed request; ticket create resolves an
 * ambiguous name through the caller's match.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { startTestService, type TestService } from './support/service';

let svc: TestService;
const fixture = (f: string) => JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'fixtures', f), 'utf8'));
const cwCompanies: { id: number; name: string; identifier: string }[] = fixture('sandbox-alpha/connectwise/companies.json');
const idOf = (name: string) => cwCompanies.filter((c) => c.name === name).map((c) => String(c.id));
let seq = 0;
const key = () => `idc-${Date.now()}-${seq++}`;

const cw = () => svc.services.simulators!.connectwise as any;
const pax8 = () => svc.services.simulators!.pax8 as any;
const pax8Companies = (): any[] => pax8().list('sandbox-alpha', 'companies');

beforeAll(async () => {
  svc = await startTestService({}, { env: { WEBHOOK_ALLOW_LOOPBACK: 'true' } });
}, 120_000);
afterAll(async () => { await svc?.close(); });

const A = (p: string) => `/tenants/${svc.alphaId}${p}`;
const B = (p: string) => `/tenants/${svc.betaId}${p}`;

describe('company create matches first and never creates in the PSA', () => {
  it('one match answers the company; with external_id the commit records the match', async () => {
    const before = JSON.stringify(cw().list('sandbox-alpha', 'companies'));
    const preview = await svc.api(A('/companies'), { method: 'POST', json: { name: 'litware, inc.' } });
    expect(preview.status).toBe(200);
    expect(preview.body).toMatchObject({ dry_run: true, matched: true, company: { source_id: idOf('Litware Inc')[0], name: 'Litware Inc' }, distributor: null });
    const commit = await svc.api(A('/companies'), { method: 'POST', json: { name: 'Litware Inc', external_id: 'ext-litware', dry_run: false, idempotency_key: key() } });
    expect(commit.status).toBe(200);
    expect(commit.body).toMatchObject({ dry_run: false, created: false, matched: true, mapping_recorded: true });
    const mappings = (await svc.api(A('/identity/mappings'))).body.mappings;
    expect(mappings.find((m: any) => m.customer_ref === 'ext-litware')).toMatchObject({ company_source_id: idOf('Litware Inc')[0], how: 'company_create', decided_by: 'isv' });
    // Contoso is matched to the book's cust-001 already: a second ref for it is not recorded, and the answer says so.
    const taken = await svc.api(A('/companies'), { method: 'POST', json: { name: 'Contoso Ltd', external_id: 'ext-contoso', dry_run: false, idempotency_key: key() } });
    expect(taken.body).toMatchObject({ matched: true, mapping_recorded: false });
    expect(JSON.stringify(cw().list('sandbox-alpha', 'companies'))).toBe(before);
  });

  it('two matches are 409 company_match_ambiguous with both candidates; none is 403 psa_company_create_refused; nothing is created', async () => {
    const before = JSON.stringify(cw().list('sandbox-alpha', 'companies'));
    const two = await svc.api(A('/companies'), { method: 'POST', json: { name: 'Lakeshore Family Dental', dry_run: false, idempotency_key: key() } });
    expect(two.status).toBe(409);
    expect(two.body.code).toBe('company_match_ambiguous');
    expect(two.body.details.candidates.map((c: any) => c.source_id).sort()).toEqual(idOf('Lakeshore Family Dental').sort());
    expect(two.body.details.candidates[0].identifier).toBeTruthy();
    const none = await svc.api(A('/companies'), { method: 'POST', json: { name: 'Quux Industries', dry_run: false, idempotency_key: key() } });
    expect({ status: none.status, code: none.body.code }).toEqual({ status: 403, code: 'psa_company_create_refused' });
    const previewNone = await svc.api(A('/companies'), { method: 'POST', json: { name: 'Quux Industries' } });
    expect({ status: previewNone.status, code: previewNone.body.code }).toEqual({ status: 403, code: 'psa_company_create_refused' });
    expect(JSON.stringify(cw().list('sandbox-alpha', 'companies'))).toBe(before);
  });

  it('without psa.company.create (sandbox-beta) it is grant_missing; a distributor create on beta is distributor_required', async () => {
    const res = await svc.api(B('/companies'), { method: 'POST', json: { name: 'Kestrel Analytics' } });
    expect(res.body).toMatchObject({ code: 'grant_missing', needed: 'psa.company.create' });
    const dist = await svc.api(B('/companies'), { method: 'POST', json: { name: 'Kestrel Analytics', fan_out: ['distributor'] } });
    expect({ status: dist.status, code: dist.body.code }).toEqual({ status: 409, code: 'distributor_required' });
  });
});

describe('company create at the distributor', () => {
  const full = (name: string) => ({
    name, fan_out: ['distributor'], phone: '206-555-0100', website: 'https://www.example.com',
    address: { street: '1 Main St', city: 'Seattle', state_or_province: 'WA', postal_code: '98101', country: 'US' },
    bill_on_behalf_of_enabled: false, self_service_allowed: true, order_approval_required: false,
  });

  it('matches an existing distributor company first and creates nothing', async () => {
    const before = pax8Companies().length;
    const res = await svc.api(A('/companies'), { method: 'POST', json: { ...full('Northwind Traders'), dry_run: false, idempotency_key: key() } });
    expect(res.status).toBe(200);
    expect(res.body.distributor).toMatchObject({ connector: 'pax8', matched: true, created: false, company: { name: 'Northwind Traders' } });
    expect(pax8Companies().length).toBe(before);
  });

  it('previews the exact request, then creates the company once; a replay and a retry after a 429 create nothing more', async () => {
    const body = full('Zephyr Analytics');
    const count = () => pax8Companies().filter((c) => c.name === 'Zephyr Analytics').length;
    const preview = await svc.api(A('/companies'), { method: 'POST', json: body });
    expect(preview.status).toBe(200);
    expect(preview.body.preview.targets[0].requests[0]).toMatchObject({ method: 'POST', path: '/companies', body: { name: 'Zephyr Analytics', address: { country: 'US' }, billOnBehalfOfEnabled: false } });
    expect(preview.body.matched).toBe(false);
    expect(count()).toBe(0);
    const k = key();
    await svc.api('/sandbox-vendors/pax8/_control/faults', { method: 'POST', key: null, headers: { authorization: `Bearer ${svc.config.adminToken}` }, json: { status: 429, times: 1, retryAfterSeconds: 1, pathPrefix: '/v1/companies' } });
    const commit = await svc.api(A('/companies'), { method: 'POST', json: { ...body, dry_run: false, idempotency_key: k } });
    expect(commit.status).toBe(201);
    expect(commit.body.distributor).toMatchObject({ matched: false, created: true });
    expect(count()).toBe(1);
    const replay = await svc.api(A('/companies'), { method: 'POST', json: { ...body, dry_run: false, idempotency_key: k } });
    expect(replay.body).toMatchObject({ idempotent_replay: true, distributor: { created: true, company: commit.body.distributor.company } });
    expect(count()).toBe(1);
  }, 60_000);

  it("refuses a company without the distributor's required fields, naming them, and sends nothing", async () => {
    const before = pax8Companies().length;
    const res = await svc.api(A('/companies'), { method: 'POST', json: { name: 'Half Baked Co', fan_out: ['distributor'], dry_run: false, idempotency_key: key() } });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('validation');
    expect(res.body.details.problems.map((p: any) => p.field)).toEqual(expect.arrayContaining(['address', 'phone', 'website']));
    expect(pax8Companies().length).toBe(before);
  });
});

describe('contacts are list and match only', () => {
  it('lists contacts with vendor and raw, and their company name', async () => {
    const res = await svc.api(A('/contacts?limit=500'));
    expect(res.status).toBe(200);
    const megan = res.body.contacts.find((c: any) => c.first_name === 'Megan' && c.last_name === 'Bowen');
    expect(megan).toMatchObject({ source: 'connectwise', company_name: 'Contoso Ltd' });
    expect(megan.vendor.native).toEqual(megan.raw);
  });

  it('matches by email (any case) and by name within a company; none gives an empty list', async () => {
    const all = (await svc.api(A('/contacts?limit=500'))).body.contacts.filter((c: any) => c.email);
    const one = all[0];
    const byEmail = await svc.api(A('/contacts/match'), { method: 'POST', json: { email: one.email.toUpperCase() } });
    expect(byEmail.body.matches.map((m: any) => m.id)).toEqual([one.id]);
    const byName = await svc.api(A('/contacts/match'), { method: 'POST', json: { name: 'megan bowen', company_name: 'Contoso Ltd.' } });
    expect(byName.body.matches.map((m: any) => `${m.first_name} ${m.last_name}`)).toEqual(['Megan Bowen']);
    expect((await svc.api(A('/contacts/match'), { method: 'POST', json: { name: 'Megan Bowen', company_name: 'Fabrikam Inc' } })).body.matches).toEqual([]);
  });

  it('POST /contacts is 405 method_not_allowed with Allow: GET', async () => {
    const res = await svc.api(A('/contacts'), { method: 'POST', json: { first_name: 'x' } });
    expect(res.status).toBe(405);
    expect(res.body.code).toBe('method_not_allowed');
    expect(res.headers.get('allow')).toBe('GET');
  });
});

describe('identity', () => {
  const book: { ref: string; name: string }[] = fixture('sandbox-alpha/isv-book.json');

  it('after start, the sandbox book auto-matched its exact unique names only: never the shared one, never the unknown one', async () => {
    const mappings = (await svc.api(A('/identity/mappings'))).body.mappings.filter((m: any) => m.how === 'auto_exact_name');
    const expected: Record<string, string> = {
      'cust-001': idOf('Contoso Ltd')[0], 'cust-002': idOf('Northwind Traders')[0], 'cust-003': idOf('Fabrikam Inc')[0],
      'cust-006': idOf('Adventure Works')[0], 'cust-007': idOf('Woodgrove Bank')[0],
    };
    expect(Object.fromEntries(mappings.map((m: any) => [m.customer_ref, m.company_source_id]))).toEqual(expected);
    for (const m of mappings) expect(m.decided_by).toBe('auto');
    expect(book.length).toBe(7);
    const rows = (await svc.api(A('/identity/unmapped'))).body.unmapped;
    const dental = rows.find((r: any) => r.side === 'isv_customer' && r.id === 'cust-004');
    expect(dental).toMatchObject({ state: 'needs_match', actions: ['match', 'skip'] });
    expect(dental.candidates.map((c: any) => c.id).sort()).toEqual(idOf('Lakeshore Family Dental').sort());
    expect(rows.find((r: any) => r.id === 'cust-005')).toMatchObject({ state: 'needs_match', candidates: [] });
    const tailspin = rows.find((r: any) => r.side === 'psa_company' && r.name === 'Tailspin Toys');
    // The sandbox ISV registers no import endpoint at start: import (501 without one) is not offered.
    expect(tailspin).toMatchObject({ state: 'needs_match', actions: ['match', 'skip'] });
    // Matched rows are not leftovers.
    expect(rows.some((r: any) => r.id === 'cust-001' || r.id === idOf('Contoso Ltd')[0])).toBe(false);
  });

  it('ticket create with the shared name fails with candidates before the match, and lands on the matched company after it', async () => {
    const body = { company_name: 'Lakeshore Family Dental', summary: 'Chair sensor offline' };
    const before = await svc.api(A('/tickets'), { method: 'POST', json: body });
    expect(before.status).toBe(409);
    expect(before.body.code).toBe('company_match_ambiguous');
    expect(before.body.message).toMatch(/identity\/match/);
    expect(before.body.details.candidates).toHaveLength(2);
    const chosen = idOf('Lakeshore Family Dental')[1];
    const m = await svc.api(A('/identity/match'), { method: 'POST', json: { customer_ref: 'cust-004', company_source_id: chosen } });
    expect(m.body).toMatchObject({ action: 'match', changed: true, mapping: { customer_ref: 'cust-004', company_source_id: chosen, how: 'manual', decided_by: 'isv' } });
    const after = await svc.api(A('/tickets'), { method: 'POST', json: { ...body, dry_run: false, idempotency_key: key() } });
    expect(after.status).toBe(201);
    expect(cw().get('sandbox-alpha', 'tickets', Number(after.body.ticket_ref)).company.id).toBe(Number(chosen));
  });

  it('skip sets a row aside, unset brings it back to Needs match and only unsets (no auto-match)', async () => {
    const rowOf = async (id: string) => (await svc.api(A('/identity/unmapped'))).body.unmapped.find((r: any) => r.id === id);
    await svc.api(A('/identity/skip'), { method: 'POST', json: { customer_ref: 'cust-005' } });
    expect(await rowOf('cust-005')).toMatchObject({ state: 'skipped', actions: ['unset'] });
    expect((await svc.api(A('/identity/unset'), { method: 'POST', json: { customer_ref: 'cust-005' } })).body).toMatchObject({ changed: true });
    expect(await rowOf('cust-005')).toMatchObject({ state: 'needs_match' });
    // Unsetting an auto-match leaves both sides unmatched, though auto-match could pair them again.
    await svc.api(A('/identity/unset'), { method: 'POST', json: { customer_ref: 'cust-002' } });
    expect(await rowOf('cust-002')).toMatchObject({ state: 'needs_match', candidates: [{ id: idOf('Northwind Traders')[0] }] });
    expect((await svc.api(A('/identity/mappings'))).body.mappings.some((m: any) => m.customer_ref === 'cust-002')).toBe(false);
  });

  it('the MSP key decides too (it names the ISV), and the record says so; without isv_id it is refused', async () => {
    const isvId = (await svc.services.ds.query("SELECT id FROM isvs WHERE name = 'Sandbox ISV'"))[0].id;
    const res = await svc.api(A('/identity/match'), { method: 'POST', key: svc.alphaMspKey, json: { customer_ref: 'cust-002', company_source_id: idOf('Northwind Traders')[0], isv_id: isvId } });
    expect(res.body.mapping).toMatchObject({ decided_by: 'msp', how: 'manual' });
    const noIsv = await svc.api(A('/identity/unmapped'), { key: svc.alphaMspKey });
    expect(noIsv.status).toBe(422);
    expect((await svc.api(A(`/identity/unmapped?isv_id=${isvId}`), { key: svc.alphaMspKey })).status).toBe(200);
  });

  it('a book push auto-matches the new exact names and never imports', async () => {
    const res = await svc.api(A('/identity/book'), { method: 'PUT', json: { customers: [{ ref: 'cust-100', name: 'Tailspin Toys' }, { ref: 'cust-101', name: 'Lakeshore Family Dental' }] } });
    expect(res.status).toBe(200);
    const mappings = (await svc.api(A('/identity/mappings'))).body.mappings;
    expect(mappings.find((m: any) => m.customer_ref === 'cust-100')).toMatchObject({ company_source_id: idOf('Tailspin Toys')[0], how: 'auto_exact_name' });
    expect(mappings.some((m: any) => m.customer_ref === 'cust-101')).toBe(false);
    expect(mappings.some((m: any) => m.how === 'import')).toBe(false);
    expect((await svc.api(A('/identity/book'))).body.book.map((c: any) => c.ref)).toEqual(expect.arrayContaining(['cust-100', 'cust-101']));
  });

  describe('import', () => {
    let receiver: http.Server;
    const calls: { id: string; body: any }[] = [];
    let secret = '';
    beforeAll(async () => {
      receiver = http.createServer((req, res) => {
        let raw = '';
        req.on('data', (c) => { raw += c; });
        req.on('end', () => {
          try {
            const body = new Webhook(secret).verify(raw, req.headers as Record<string, string>) as any;
            calls.push({ id: String(req.headers['webhook-id']), body });
            res.setHeader('content-type', 'application/json');
            res.end(JSON.stringify({ ref: `imported-${body.company.source_id}` }));
          } catch {
            res.statusCode = 400;
            res.end('bad signature');
          }
        });
      });
      await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    });
    afterAll(async () => { await new Promise<void>((r) => receiver.close(() => r())); });

    it('without an import endpoint, import is 501 not_supported', async () => {
      const res = await svc.api(A('/identity/import'), { method: 'POST', json: { all_unmatched: true } });
      expect({ status: res.status, code: res.body.code }).toEqual({ status: 501, code: 'not_supported' });
    });

    it('previews without calling the endpoint, commits once per key with a signed request, and matches what it imported', async () => {
      const port = (receiver.address() as AddressInfo).port;
      const reg = await svc.api(A('/identity/import-endpoint'), { method: 'PUT', json: { url: `http://127.0.0.1:${port}/import` } });
      expect(reg.status).toBe(200);
      secret = reg.body.secret;
      const tailspinFree = idOf('Trey Research')[0];
      // With an endpoint, the leftover companies offer import (book customers never do).
      const rows = (await svc.api(A('/identity/unmapped'))).body.unmapped;
      expect(rows.find((r: any) => r.side === 'psa_company' && r.id === tailspinFree)).toMatchObject({ actions: ['match', 'import', 'skip'] });
      expect(rows.find((r: any) => r.side === 'isv_customer' && r.state === 'needs_match')).toMatchObject({ actions: ['match', 'skip'] });
      const preview = await svc.api(A('/identity/import'), { method: 'POST', json: { company_source_ids: [tailspinFree] } });
      expect(preview.status).toBe(200);
      expect(preview.body.companies).toEqual([{ company_source_id: tailspinFree, connection_id: expect.any(String), name: 'Trey Research', customer_ref: null }]);
      expect(calls).toHaveLength(0);
      const k = key();
      const commit = await svc.api(A('/identity/import'), { method: 'POST', json: { company_source_ids: [tailspinFree], dry_run: false, idempotency_key: k } });
      expect(commit.status).toBe(201);
      expect(commit.body.companies[0].customer_ref).toBe(`imported-${tailspinFree}`);
      expect(calls).toHaveLength(1);
      expect(calls[0].body).toMatchObject({ type: 'company.import', company: { source_id: tailspinFree, name: 'Trey Research' } });
      const replay = await svc.api(A('/identity/import'), { method: 'POST', json: { company_source_ids: [tailspinFree], dry_run: false, idempotency_key: k } });
      expect(replay.body.idempotent_replay).toBe(true);
      expect(calls).toHaveLength(1);
      const mapping = (await svc.api(A('/identity/mappings'))).body.mappings.find((m: any) => m.customer_ref === `imported-${tailspinFree}`);
      expect(mapping).toMatchObject({ company_source_id: tailspinFree, how: 'import', decided_by: 'isv' });
    });

    it('bulk import of every unmatched company previews them all and calls nothing', async () => {
      const unmatched = (await svc.api(A('/identity/unmapped'))).body.unmapped.filter((r: any) => r.side === 'psa_company' && r.state === 'needs_match');
      const preview = await svc.api(A('/identity/import'), { method: 'POST', json: { all_unmatched: true } });
      expect(preview.body.companies.map((c: any) => c.company_source_id).sort()).toEqual(unmatched.map((r: any) => r.id).sort());
      expect(preview.body.preview.targets[0].requests).toHaveLength(unmatched.length);
      expect(calls).toHaveLength(1);
    });
  });
});
