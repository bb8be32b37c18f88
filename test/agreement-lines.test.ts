/**
 * Agreement line writes over HTTP against the simulators (interface document rules 8 and 14, docs/architecture.md,
 * Agreements and billing): each verb on ConnectWise (sandbox-alpha) and Autotask (a tenant made with
 * create_connection) changes exactly what it should in the simulator's state, a preview and every
 * refusal change nothing, a replay returns the first answer, a throttled write lands once, a replace
 * whose add fails says so and a retry with the same key finishes it; the limited connector (HaloPSA,
 * sandbox-beta) has no agreements list, previews everywhere and commits on its fixture host only.
 */
import { loadVendorFixtures } from '../src/sandbox/fixtures';
import { startTestService, type TestService } from './support/service';

let svc: TestService;
let cw: any;
let at: any;
let halo: any;
let atTenant: string;

let keySeq = 0;
const newKey = () => `akey-${Date.now()}-${keySeq++}`;
const alpha = (path: string) => `/tenants/${svc.alphaId}${path}`;
const beta = (path: string) => `/tenants/${svc.betaId}${path}`;
const atPath = (path: string) => `/tenants/${atTenant}${path}`;

const cwAdditions = () => cw.list('sandbox-alpha', 'additions') as any[];
const cwState = () => JSON.stringify(cwAdditions());
const cwLine = (id: number) => cwAdditions().find((a) => a.id === id);
const atState = () => JSON.stringify({ services: at.list('autotask-demo', 'ContractServices'), units: at.list('autotask-demo', 'ContractServiceUnits') });
const atUnits = (serviceId: number) => (at.list('autotask-demo', 'ContractServiceUnits') as any[])
  .filter((u) => u.contractServiceID === serviceId).sort((a, b) => a.startDate.localeCompare(b.startDate)).map((u) => [u.startDate.slice(0, 10), u.units]);
const haloState = () => JSON.stringify(halo.list('sandbox-beta', 'recurring_invoices'));

async function fault(vendor: string, spec: Record<string, unknown>) {
  const res = await fetch(`${svc.url}/sandbox-vendors/${vendor}/_control/faults`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.config.adminToken}` }, body: JSON.stringify(spec),
  });
  expect(res.status).toBe(204);
}
const clearFaults = (vendor: string) =>
  fetch(`${svc.url}/sandbox-vendors/${vendor}/_control/faults`, { method: 'DELETE', headers: { authorization: `Bearer ${svc.config.adminToken}` } });

const lines = (path: string, json: Record<string, unknown>) => svc.api(`${path}/lines`, { method: 'POST', json });
const commit = (json: Record<string, unknown>) => ({ ...json, dry_run: false, idempotency_key: newKey() });

/** The agreement as GET /agreements serves it after the write (the commit synced it back). */
async function servedLines(path: string, agreementId: string): Promise<any[]> {
  const res = await svc.api(`${path}/agreements?limit=500`);
  expect(res.status).toBe(200);
  return res.body.agreements.find((a: any) => a.source_id === agreementId).lines;
}

beforeAll(async () => {
  // The vendors' day is fixed: the Autotask sandbox contract runs 2026-01-01 to 2026-12-31, and the
  // simulator and the writer both refuse changes to a contract that has ended.
  svc = await startTestService({}, { vendorNow: () => Date.parse('2026-11-20T12:00:00Z') });
  cw = svc.services.simulators!.connectwise;
  at = svc.services.simulators!.autotask;
  halo = svc.services.simulators!.halopsa;

  // An Autotask MSP, as an admin sets one up: tenant, connection, the ISV's grants, a sync.
  const fixtures = loadVendorFixtures('autotask-demo', 'autotask');
  at.seed('autotask-demo', fixtures.resources);
  const isv = (await svc.services.ds.query("SELECT id FROM isvs WHERE name = 'Sandbox ISV'"))[0].id;
  atTenant = (await svc.graphql('mutation { create_tenant(name: "Autotask Agreements MSP", slug: "autotask-agreements") { id } }')).data.create_tenant.id;
  const c = await svc.graphql('mutation($input: CreateConnectionInput!) { create_connection(input: $input) { id } }', {
    input: { tenant_id: atTenant, kind: 'psa', connector: 'autotask', base_url: `${svc.url}/sandbox-vendors/autotask/atservicesrest/v1.0`,
      credentials: { username: 'sandbox', secret: 'sandbox-secret', integrationCode: 'SANDBOX' },
      status_mapping: Object.entries(fixtures.statusMapping).map(([vendor_status, canonical]) => ({ vendor_status, canonical })) },
  });
  await svc.graphql('mutation($i: ID!, $c: ID!) { set_grant(isv_id: $i, connection_id: $c, keys: ["psa.agreement.write"]) { id } }', { i: isv, c: c.data.create_connection.id });
  expect((await svc.api(atPath('/sync'), { method: 'POST', json: {} })).body.ok).toBe(true);
}, 120_000);
afterAll(async () => { await svc?.close(); });

describe('POST /tenants/{t}/agreements', () => {
  it('is refused with 422 agreement_header_not_supported, preview or commit, and creates nothing', async () => {
    const before = cwState();
    for (const json of [{ name: 'New MSA', company_name: 'Fabrikam' }, commit({ name: 'New MSA', company_name: 'Fabrikam' })]) {
      const res = await svc.api(alpha('/agreements'), { method: 'POST', json });
      expect(res.status).toBe(422);
      expect(res.body.code).toBe('agreement_header_not_supported');
    }
    expect(cwState()).toBe(before);
  });
});

describe('agreement lines on ConnectWise', () => {
  const path = () => alpha('/agreements/101');

  it('add: a preview shows the exact request and changes nothing; the commit adds one addition, a replay nothing more', async () => {
    const before = cwState();
    const body = { verb: 'add', product_source_id: '3', quantity: 7, unit_price: 12.5, effective_date: '2026-12-01' };
    const preview = await lines(path(), body);
    expect(preview.status).toBe(200);
    expect(preview.body.preview.targets[0].requests).toEqual([{
      method: 'POST', path: '/finance/agreements/101/additions',
      body: expect.objectContaining({ product: { id: 3 }, billCustomer: 'Billable', quantity: 7, unitPrice: 12.5, effectiveDate: '2026-12-01T00:00:00Z' }),
    }]);
    expect(cwState()).toBe(before);

    const key = newKey();
    const done = await lines(path(), { ...body, dry_run: false, idempotency_key: key });
    expect(done.status).toBe(201);
    expect(done.body).toMatchObject({ created: true, partial_failure: false, steps: [{ step: 'add', ok: true }] });
    const added = cwAdditions().filter((a) => !JSON.parse(before).some((b: any) => b.id === a.id));
    expect(added).toHaveLength(1);
    expect(added[0]).toMatchObject({ agreementId: 101, product: expect.objectContaining({ id: 3 }), quantity: 7, unitPrice: 12.5 });
    expect(String(added[0].id)).toBe(done.body.steps[0].line_source_id);
    expect((await servedLines(alpha(''), '101')).some((l) => l.source_id === String(added[0].id) && l.quantity === 7)).toBe(true);

    const after = cwState();
    const replay = await lines(path(), { ...body, dry_run: false, idempotency_key: key });
    expect(replay.status).toBe(201);
    expect(replay.body).toMatchObject({ idempotent_replay: true, steps: done.body.steps });
    expect(cwState()).toBe(after);
  }, 60_000);

  it('rewrite: quantity and price of the line and nothing else', async () => {
    const before = cwLine(802);
    const others = (xs: any[]) => JSON.stringify(xs.filter((a) => a.id !== 802));
    const untouched = others(cwAdditions());
    const res = await lines(path(), commit({ verb: 'rewrite', line_source_id: '802', quantity: before.quantity + 3, unit_price: 99 }));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ created: false, steps: [{ step: 'rewrite', ok: true, line_source_id: '802' }] });
    const after = cwLine(802);
    expect(after.quantity).toBe(before.quantity + 3);
    expect(after.unitPrice).toBe(99);
    expect(after.product).toEqual(before.product);
    expect(after.cancelledDate ?? null).toBe(before.cancelledDate ?? null);
    expect((await servedLines(alpha(''), '101')).find((l) => l.source_id === '802').quantity).toBe(before.quantity + 3);
    expect(others(cwAdditions())).toBe(untouched);
  }, 60_000);

  it('end: sets cancelledDate of the line only', async () => {
    const others = () => JSON.stringify(cwAdditions().filter((a) => a.id !== 803));
    const untouched = others();
    const res = await lines(path(), commit({ verb: 'end', line_source_id: '803', effective_date: '2026-12-31' }));
    expect(res.status).toBe(200);
    expect(cwLine(803).cancelledDate).toBe('2026-12-31T00:00:00Z');
    expect(others()).toBe(untouched);
  }, 60_000);

  it('a 429 then success writes once', async () => {
    const count = cwAdditions().length;
    await fault('connectwise', { status: 429, times: 2, retryAfterSeconds: 1, pathIncludes: '/finance/agreements/102/additions', method: 'POST' });
    try {
      const res = await lines(alpha('/agreements/102'), commit({ verb: 'add', product_source_id: '3', quantity: 2, effective_date: '2026-12-01' }));
      expect(res.status).toBe(201);
    } finally { await clearFaults('connectwise'); }
    expect(cwAdditions()).toHaveLength(count + 1);
  }, 60_000);

  it('an add whose answer was lost is found by its marker and lands once', async () => {
    const count = cwAdditions().length;
    await fault('connectwise', { status: 200, times: 1, pathIncludes: '/finance/agreements/104/additions', method: 'POST', afterHandler: 'drop' });
    try {
      const res = await lines(alpha('/agreements/104'), commit({ verb: 'add', product_source_id: '5', quantity: 1, effective_date: '2026-12-01' }));
      expect(res.status).toBe(201);
      expect(res.body.steps[0]).toMatchObject({ step: 'add', ok: true, reconciled: true });
    } finally { await clearFaults('connectwise'); }
    expect(cwAdditions()).toHaveLength(count + 1);
  }, 60_000);

  it('another tenant\'s agreement is 404, an MSP key 403, and the writes are in the audit log', async () => {
    const before = cwState();
    const foreign = await lines(alpha(`/agreements/29684001`), { verb: 'add', product_source_id: '29686001', quantity: 1 });
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('agreement_requires_existing');
    const msp = await svc.api(alpha('/agreements/101/lines'), { method: 'POST', key: svc.alphaMspKey, json: { verb: 'end', line_source_id: '801' } });
    expect(msp.status).toBe(403);
    expect(cwState()).toBe(before);
    const audit = (await svc.api(alpha('/audit?limit=500'))).body.audit;
    expect(audit.some((e: any) => e.action === 'agreement.line.add.commit' && e.outcome === 'ok' && e.subject_ref === '101')).toBe(true);
    expect(audit.some((e: any) => e.action.startsWith('agreement.line.') && e.outcome === 'refused' && e.detail.code === 'agreement_requires_existing')).toBe(true);
  }, 60_000);

  it('replace: ends the line and adds the product from the same date', async () => {
    const count = cwAdditions().length;
    const res = await lines(path(), commit({ verb: 'replace', line_source_id: '804', product_source_id: '2', quantity: 5, effective_date: '2026-12-15' }));
    expect(res.status).toBe(201);
    expect(res.body.steps.map((s: any) => [s.step, s.ok])).toEqual([['end', true], ['add', true]]);
    expect(cwLine(804).cancelledDate).toBe('2026-12-15T00:00:00Z');
    expect(cwAdditions()).toHaveLength(count + 1);
    expect(cwLine(Number(res.body.steps[1].line_source_id))).toMatchObject({ product: expect.objectContaining({ id: 2 }), quantity: 5, effectiveDate: '2026-12-15T00:00:00Z' });
  }, 60_000);

  it('a replace whose add fails reports it (207); a retry with the same key finishes it without a second end or add', async () => {
    const count = cwAdditions().length;
    const key = newKey();
    const body = { verb: 'replace', line_source_id: '805', product_source_id: '8', quantity: 4, effective_date: '2026-12-20', dry_run: false, idempotency_key: key };
    await fault('connectwise', { status: 503, times: 5, pathIncludes: '/finance/agreements/101/additions', method: 'POST' });
    let half;
    try {
      half = await lines(path(), body);
    } finally { await clearFaults('connectwise'); }
    expect(half.status).toBe(207);
    expect(half.body).toMatchObject({ partial_failure: true, failed_step: 'add', retryable: true, created: false });
    expect(half.body.steps.map((s: any) => [s.step, s.ok])).toEqual([['end', true], ['add', false]]);
    expect(cwLine(805).cancelledDate).toBe('2026-12-20T00:00:00Z');
    expect(cwAdditions()).toHaveLength(count);

    // The retry: no PATCH of the line again (a fault on it would fail the retry), one add.
    await fault('connectwise', { status: 400, times: 5, pathIncludes: '/finance/agreements/101/additions/805', method: 'PATCH' });
    let finished;
    try {
      finished = await lines(path(), body);
    } finally { await clearFaults('connectwise'); }
    expect(finished.status).toBe(201);
    expect(finished.body).toMatchObject({ partial_failure: false, steps: [{ step: 'end', ok: true, reconciled: true }, { step: 'add', ok: true }] });
    expect(cwAdditions()).toHaveLength(count + 1);
    const replay = await lines(path(), body);
    expect(replay.body).toMatchObject({ idempotent_replay: true, partial_failure: false });
    expect(cwAdditions()).toHaveLength(count + 1);
  }, 90_000);

  it('refuses an inactive or unknown agreement (404) and every validation rule (422), writing nothing', async () => {
    const before = cwState();
    const refused: [string, Record<string, unknown>, number, string | null][] = [
      ['/agreements/106', { verb: 'add', product_source_id: '3', quantity: 1 }, 404, 'agreement_requires_existing'],
      ['/agreements/999999', { verb: 'add', product_source_id: '3', quantity: 1 }, 404, 'agreement_requires_existing'],
      ['/agreements/101', { verb: 'rewrite', line_source_id: '999999', quantity: 1 }, 422, 'validation'],
      ['/agreements/101', { verb: 'end', line_source_id: '807' }, 422, 'validation'], // a line of agreement 102
      ['/agreements/101', { verb: 'add', product_source_id: '999', quantity: 1 }, 422, 'validation'],
      ['/agreements/101', { verb: 'add', product_source_id: '3', quantity: -1 }, 422, 'validation'],
      ['/agreements/101', { verb: 'rewrite', line_source_id: '801', unit_price: -5 }, 422, 'validation'],
      ['/agreements/101', { verb: 'add', product_source_id: '3', quantity: 1, effective_date: '2026-02-30' }, 422, 'validation'],
      ['/agreements/101', { verb: 'end', line_source_id: '801', effective_date: '2020-01-01' }, 422, 'validation'], // before it starts
      ['/agreements/101', { verb: 'add', quantity: 1 }, 422, null], // no product: request schema
      ['/agreements/101', { verb: 'rewrite', line_source_id: '801' }, 422, null], // nothing to change
      ['/agreements/101', { verb: 'end', line_source_id: '801', quantity: 3 }, 422, null], // not a field of end
      ['/agreements/101', { verb: 'renew', line_source_id: '801' }, 422, null],
    ];
    for (const [p, json, status, code] of refused) {
      for (const body of [json, commit(json)]) {
        const res = await lines(alpha(p), body);
        expect([p, json, res.status]).toEqual([p, json, status]);
        if (code) expect(res.body.code).toBe(code);
        else expect(res.body.detail).toBeDefined();
      }
    }
    const inactive = await lines(alpha('/agreements/106'), { verb: 'add', product_source_id: '3', quantity: 1 });
    expect(inactive.body.details.agreement_status).toBe('cancelled');
    expect(cwState()).toBe(before);
  }, 90_000);
});

describe('agreement lines on Autotask', () => {
  const path = () => atPath('/agreements/29684001');

  it('add: a ContractService plus its units through an adjustment; a preview changes nothing', async () => {
    const before = atState();
    const body = { verb: 'add', product_source_id: '29686001', quantity: 6, effective_date: '2026-12-01' };
    const preview = await lines(path(), body);
    expect(preview.status).toBe(200);
    expect(preview.body.preview.targets[0].requests.map((r: any) => [r.method, r.path])).toEqual(expect.arrayContaining([['POST', '/Contracts/29684001/Services']]));
    expect(atState()).toBe(before);
    const res = await lines(path(), commit(body));
    expect(res.status).toBe(201);
    const added = (at.list('autotask-demo', 'ContractServices') as any[]).filter((s) => s.contractID === 29684001 && s.serviceID === 29686001);
    expect(added).toHaveLength(1);
    expect(String(added[0].id)).toBe(res.body.steps[0].line_source_id);
    expect(atUnits(added[0].id).find(([d]: any) => d === '2026-12-01')?.[1]).toBe(6);
  }, 60_000);

  it('rewrite: the units change through an adjustment of the difference, never by patching the service', async () => {
    const service = () => (at.list('autotask-demo', 'ContractServices') as any[]).find((s) => s.id === 29684503);
    const unchanged = JSON.stringify(service());
    const nov = atUnits(29684503).find(([d]: any) => d === '2026-11-01')![1];
    const res = await lines(path(), commit({ verb: 'rewrite', line_source_id: '29684503', quantity: nov + 4, effective_date: '2026-12-01' }));
    expect(res.status).toBe(200);
    expect(atUnits(29684503).find(([d]: any) => d === '2026-12-01')![1]).toBe(nov + 4);
    expect(atUnits(29684503).find(([d]: any) => d === '2026-11-01')![1]).toBe(nov);
    expect(JSON.stringify(service())).toBe(unchanged);
  }, 60_000);

  it('end: the units go to zero from the end date', async () => {
    const res = await lines(path(), commit({ verb: 'end', line_source_id: '29684504', effective_date: '2026-12-01' }));
    expect(res.status).toBe(200);
    const units = atUnits(29684504);
    expect(units.find(([d]: any) => d === '2026-12-01')![1]).toBe(0);
    expect(units.find(([d]: any) => d === '2026-11-01')![1]).toBeGreaterThan(0);
  }, 60_000);

  it('replace: the old service to zero units and the new one added, under one key; a replay writes nothing', async () => {
    const json = commit({ verb: 'replace', line_source_id: '29684502', product_source_id: '29686002', quantity: 3, effective_date: '2026-12-01' });
    const res = await lines(path(), json);
    expect(res.status).toBe(201);
    expect(atUnits(29684502).find(([d]: any) => d === '2026-12-01')![1]).toBe(0);
    const added = (at.list('autotask-demo', 'ContractServices') as any[]).filter((s) => s.contractID === 29684001 && s.serviceID === 29686002);
    expect(added).toHaveLength(1);
    expect(atUnits(added[0].id).find(([d]: any) => d === '2026-12-01')![1]).toBe(3);
    const after = atState();
    expect((await lines(path(), json)).body.idempotent_replay).toBe(true);
    expect(atState()).toBe(after);
  }, 60_000);

  it('a replace whose add Autotask would refuse lands not at all: 422, and the old line keeps its units', async () => {
    // Service 29686002 is on the contract since the replace above; Autotask takes no second line of it.
    const before = atState();
    const key = newKey();
    const refused = await lines(path(), { verb: 'replace', line_source_id: '29684503', product_source_id: '29686002', quantity: 2, effective_date: '2026-12-01', dry_run: false, idempotency_key: key });
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe('validation');
    expect(refused.body.details.problems).toEqual([expect.objectContaining({ field: 'product_source_id', message: expect.stringContaining('already on contract') })]);
    expect(atState()).toBe(before);
  }, 60_000);

  it('refuses an inactive agreement (404) and a line of another agreement (422)', async () => {
    const before = atState();
    const inactive = await lines(atPath('/agreements/29684006'), commit({ verb: 'add', product_source_id: '29686001', quantity: 1 }));
    expect(inactive.status).toBe(404);
    expect(inactive.body.code).toBe('agreement_requires_existing');
    const other = await lines(path(), commit({ verb: 'end', line_source_id: '29684506' }));
    expect(other.status).toBe(422);
    expect(other.body.code).toBe('validation');
    expect(atState()).toBe(before);
  }, 60_000);
});

describe('agreement lines on the limited connector', () => {
  it('has no agreements list: GET answers 501 not_supported', async () => {
    const res = await svc.api(beta('/agreements'));
    expect(res.status).toBe(501);
    expect(res.body.code).toBe('not_supported');
  });

  it('previews, and commits an add on its fixture host (a fixture agreement)', async () => {
    const before = haloState();
    // A product of the PSA's own catalogue: the list also holds the distributor's, in id (random) order.
    const products: { source: string; source_id: string; active: boolean | null }[] = (await svc.api(beta('/products?limit=500'))).body.products;
    const product = products.find((p) => p.source === 'halopsa' && p.active !== false)!.source_id;
    const body = { verb: 'add', product_source_id: product, quantity: 2, effective_date: '2026-12-01' };
    const preview = await lines(beta('/agreements/31'), body);
    expect(preview.status).toBe(200);
    expect(preview.body.preview.targets[0].requests.length).toBeGreaterThan(0);
    expect(haloState()).toBe(before);
    const res = await lines(beta('/agreements/31'), commit(body));
    expect(res.status).toBe(201);
    expect(haloState()).not.toBe(before);
  }, 60_000);

  it('on a host that is not its fixture host it previews, and a commit is 501 not_supported that writes nothing', async () => {
    const isv = (await svc.services.ds.query("SELECT id FROM isvs WHERE name = 'Sandbox ISV'"))[0].id;
    const tenantId = (await svc.graphql('mutation { create_tenant(name: "Halo Agreements Prod", slug: "halo-agreements-prod") { id } }')).data.create_tenant.id;
    const c = await svc.graphql('mutation($input: CreateConnectionInput!) { create_connection(input: $input) { id } }', {
      input: { tenant_id: tenantId, kind: 'psa', connector: 'halopsa', base_url: `${svc.url}/sandbox-vendors/halopsa`, credentials: { clientId: 'sandbox', clientSecret: 'sandbox-secret' } },
    });
    await svc.graphql('mutation($i: ID!, $c: ID!) { set_grant(isv_id: $i, connection_id: $c, keys: ["psa.agreement.write"]) { id } }', { i: isv, c: c.data.create_connection.id });
    await svc.api(`/tenants/${tenantId}/sync`, { method: 'POST', json: {} });
    const before = haloState();
    const body = { verb: 'rewrite', line_source_id: '7006', quantity: 9 };
    expect((await lines(`/tenants/${tenantId}/agreements/32`, body)).status).toBe(200);
    const live = await lines(`/tenants/${tenantId}/agreements/32`, commit(body));
    expect(live.status).toBe(501);
    expect(live.body.code).toBe('not_supported');
    expect(haloState()).toBe(before);
  }, 60_000);
});
