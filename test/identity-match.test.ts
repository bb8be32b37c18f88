/**
 * Identity decisions over REST beyond identical names (docs/architecture.md, Companies, contacts and identity): auto-match stays exact
 * normal name only; `identity/candidates` ranks every PSA company for a customer (shared words, the
 * ISV's id, the domain) and tells two companies of one name apart; the MSP key matches a customer to a
 * company whose name differs (the ISV's ticket for that customer then lands on it), and unmatches it
 * (both go back to Needs match). The console runs these same operations.
 */
import fs from 'node:fs';
import path from 'node:path';
import { startTestService, type TestService } from './support/service';

let svc: TestService;
let isvId: string;
const cwCompanies: { id: number; name: string; city: string }[] = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'sandbox-alpha', 'connectwise', 'companies.json'), 'utf8'));
const idOf = (name: string) => String(cwCompanies.find((c) => c.name === name)!.id);
const A = (p: string) => `/tenants/${svc.alphaId}${p}`;
const msp = (p: string, init: Parameters<TestService['api']>[1] = {}) => svc.api(A(p), { ...init, key: svc.alphaMspKey });

beforeAll(async () => {
  svc = await startTestService();
  isvId = (await svc.services.ds.query("SELECT id FROM isvs WHERE name = 'Sandbox ISV'"))[0].id;
  // A customer whose name is not the PSA company's: auto-match leaves it alone.
  const push = await svc.api(A('/identity/book'), { method: 'PUT', json: { customers: [{ ref: 'cust-300', name: 'Fourth Coffee Roasters Limited', domain: 'https://www.fourthcoffee.com' }] } });
  expect(push.status).toBe(200);
}, 120_000);
afterAll(async () => { await svc?.close(); });

describe('a match between names that differ', () => {
  it('auto-match leaves it, and the leftover suggests the company, ranked, with why', async () => {
    expect((await svc.api(A('/identity/mappings'))).body.mappings.some((m: any) => m.customer_ref === 'cust-300')).toBe(false);
    const row = (await svc.api(A('/identity/unmapped'))).body.unmapped.find((r: any) => r.id === 'cust-300');
    expect(row).toMatchObject({ side: 'isv_customer', state: 'needs_match', candidates: [] });
    expect(row.suggestions[0]).toMatchObject({ side: 'psa_company', id: idOf('Fourth Coffee'), name: 'Fourth Coffee', city: 'Denver', domain: 'fourthcoffee.com', matched_with: null });
    expect(row.suggestions[0].reasons).toEqual(['similar_name', 'domain']);
  });

  it('identity/candidates ranks every company for a customer, tells a shared name apart, and searches', async () => {
    const ranked = await msp(`/identity/candidates?isv_id=${isvId}&customer_ref=cust-300`);
    expect(ranked.status).toBe(200);
    expect(ranked.body.subject).toMatchObject({ side: 'isv_customer', id: 'cust-300', name: 'Fourth Coffee Roasters Limited' });
    expect(ranked.body.candidates[0]).toMatchObject({ id: idOf('Fourth Coffee'), reasons: ['similar_name', 'domain'] });
    const dental = (await msp(`/identity/candidates?isv_id=${isvId}&customer_ref=cust-004`)).body.candidates.slice(0, 2);
    expect(dental.map((c: any) => [c.name, c.reasons])).toEqual([['Lakeshore Family Dental', ['exact_name']], ['Lakeshore Family Dental', ['exact_name']]]);
    // What tells them apart is in the answer.
    expect(new Set(dental.map((c: any) => `${c.id} ${c.identifier} ${c.city} ${c.phone}`)).size).toBe(2);
    expect(dental.map((c: any) => c.city).sort()).toEqual(['Evanston', 'Oak Park']);
    // Matched companies are candidates too, saying with whom.
    const contoso = (await svc.api(A('/identity/candidates?q=contoso'))).body.candidates[0];
    expect(contoso).toMatchObject({ name: 'Contoso Ltd', matched_with: { id: 'cust-001' } });
    expect((await svc.api(A('/identity/candidates'))).status).toBe(422);
    expect((await svc.api(A('/identity/candidates?customer_ref=nobody'))).status).toBe(404);
  });

  it('the MSP key matches it; the ISV\'s ticket for that customer then lands on the company', async () => {
    const ticket = () => svc.api(A('/tickets'), { method: 'POST', json: { company_name: 'Fourth Coffee Roasters Limited', summary: 'Espresso machine offline', dry_run: true } });
    expect((await ticket()).status).not.toBe(200);
    const res = await msp('/identity/match', { method: 'POST', json: { isv_id: isvId, customer_ref: 'cust-300', company_source_id: idOf('Fourth Coffee') } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ action: 'match', changed: true, mapping: { customer_ref: 'cust-300', customer_name: 'Fourth Coffee Roasters Limited', company_source_id: idOf('Fourth Coffee'), company_name: 'Fourth Coffee', how: 'manual', decided_by: 'msp' } });
    const previewed = await ticket();
    expect(previewed.status).toBe(200);
    expect(JSON.stringify(previewed.body.preview)).toContain(idOf('Fourth Coffee'));
    const rows = (await svc.api(A('/identity/unmapped'))).body.unmapped;
    expect(rows.some((r: any) => r.id === 'cust-300' || r.id === idOf('Fourth Coffee'))).toBe(false);
    const audit = (await msp('/audit?action=identity.match')).body.audit[0];
    // A person reads the pair by name beside the ids.
    expect(audit).toMatchObject({ subject_ref: `cust-300->${idOf('Fourth Coffee')}`, detail: { decided_by: 'msp', subject_label: 'Fourth Coffee Roasters Limited → Fourth Coffee' } });
  });

  it('the MSP key unmatches it: both sides are back in Needs match, and a second unmatch changes nothing', async () => {
    const res = await msp('/identity/unset', { method: 'POST', json: { isv_id: isvId, customer_ref: 'cust-300' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ action: 'unset', changed: true, mapping: null });
    expect((await svc.api(A('/identity/mappings'))).body.mappings.some((m: any) => m.customer_ref === 'cust-300')).toBe(false);
    const rows = (await svc.api(A('/identity/unmapped'))).body.unmapped;
    expect(rows.find((r: any) => r.id === 'cust-300')).toMatchObject({ state: 'needs_match', actions: ['match', 'skip'] });
    expect(rows.find((r: any) => r.side === 'psa_company' && r.id === idOf('Fourth Coffee'))).toMatchObject({ state: 'needs_match' });
    // The unmatch's entry names the pair it undid, read before it was undone.
    expect((await msp('/audit?action=identity.unset')).body.audit[0]).toMatchObject({ subject_ref: 'cust-300', detail: { subject_label: 'Fourth Coffee Roasters Limited → Fourth Coffee' } });
    expect((await msp('/identity/unset', { method: 'POST', json: { isv_id: isvId, customer_ref: 'cust-300' } })).body).toMatchObject({ changed: false });
  });

  it('an ISV key decides on its own book only; the MSP key must name the ISV', async () => {
    expect((await msp('/identity/candidates?customer_ref=cust-300')).status).toBe(422);
    expect((await svc.api(`/tenants/${svc.betaId}/identity/candidates?customer_ref=cust-300`)).status).toBe(404);
  });
});
