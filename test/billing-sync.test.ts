/**
 * Products and subscriptions sync like every other resource: on the first sync of the sandbox, the
 * ConnectWise catalogue, the Pax8 products and subscriptions (alpha) and the HaloPSA items (beta) are in
 * the store, their ids line up with the agreement lines, and an MSP-side change at the vendor is picked up
 * by the next sync. Also a change made through the agreement-line writer shows in the next sync.
 */
import { connectwiseAgreementWriter } from '../src/connectors/connectwise/agreement-writer';
import { VendorHttpClient } from '../src/connectors/vendor-http';
import { loadVendorFixtures } from '../src/sandbox/fixtures';
import type { Pax8Simulator } from '../src/simulators/pax8/simulator';
import { startTestService, type TestService } from './support/service';

let svc: TestService;
beforeAll(async () => { svc = await startTestService(); }, 120_000);
afterAll(async () => { await svc?.close(); });

type Row = Record<string, any>;
const rowsOf = (table: string, tenantId: string, extra = ''): Promise<Row[]> =>
  svc.services.ds.query(`SELECT r.*, c.connector FROM "${table}" r JOIN connections c ON c.id = r.connection_id WHERE r.tenant_id = $1 ${extra} ORDER BY r.source_id`, [tenantId]);

describe('products and subscriptions in the store after the first sync', () => {
  it('alpha: the ConnectWise catalogue holds every product its agreement lines name', async () => {
    const catalog = loadVendorFixtures('sandbox-alpha', 'connectwise').resources.catalog as Row[];
    const products = (await rowsOf('products', svc.alphaId)).filter((p) => p.connector === 'connectwise');
    expect(products.map((p) => p.source_id).sort()).toEqual(catalog.map((c) => String(c.id)).sort());
    const retired = products.find((p) => p.sku === 'AV-LEGACY')!;
    expect(retired).toMatchObject({ active: false, name: 'Legacy Antivirus (retired)', unit_price: 3, unit_cost: 1.5 });
    const lines: Row[] = await svc.services.ds.query('SELECT product_source_id FROM agreement_lines WHERE tenant_id = $1', [svc.alphaId]);
    const ids = new Set(products.map((p) => p.source_id));
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.every((l) => ids.has(l.product_source_id))).toBe(true);
  });

  it('alpha: Pax8 products and subscriptions, some quantities differing from the agreement lines', async () => {
    const fx = loadVendorFixtures('sandbox-alpha', 'pax8').resources;
    const products = (await rowsOf('products', svc.alphaId)).filter((p) => p.connector === 'pax8');
    expect(products).toHaveLength((fx.products as Row[]).length);
    const subs = await rowsOf('subscriptions', svc.alphaId);
    expect(subs).toHaveLength((fx.subscriptions as Row[]).length);
    const premium = products.find((p) => p.name === 'Microsoft 365 Business Premium')!;
    const companies: Row[] = await svc.services.ds.query(
      `SELECT co.source_id, co.identifier FROM companies co JOIN connections c ON c.id = co.connection_id WHERE co.tenant_id = $1 AND c.connector = 'pax8'`, [svc.alphaId]);
    const contoso = companies.find((c) => c.identifier === 'ContosoLtd')!;
    const fabrikam = companies.find((c) => c.identifier === 'FabrikamInc')!;
    const sub = (company: Row, productName: string) => {
      const product = products.find((p) => p.name === productName)!;
      return subs.find((s) => s.company_source_id === company.source_id && s.product_source_id === product.source_id)!;
    };
    expect(sub(contoso, premium.name)).toMatchObject({ quantity: 22, price: 22, partner_cost: 19.8, billing_term: 'Annual', status: 'Active' });
    expect(sub(fabrikam, 'Exchange Online (Plan 1)').quantity).toBe(14);
    const line = async (id: string) => (await svc.services.ds.query('SELECT quantity FROM agreement_lines WHERE tenant_id = $1 AND source_id = $2', [svc.alphaId, id]))[0];
    expect((await line('804')).quantity).toBe(40); // Contoso Business Premium: 40 billed, 22 at Pax8
    expect((await line('813')).quantity).toBe(12); // Fabrikam Exchange Online: 12 billed, 14 at Pax8
    expect((await line('812')).quantity).toBe(sub(fabrikam, premium.name).quantity); // 55 both
  });

  it('beta: HaloPSA items; every recurring-invoice line points at its item by id', async () => {
    const products = await rowsOf('products', svc.betaId);
    expect(products).toHaveLength((loadVendorFixtures('sandbox-beta', 'halopsa').resources.items as Row[]).length);
    const lines: Row[] = await svc.services.ds.query('SELECT product_source_id, raw FROM agreement_lines WHERE tenant_id = $1', [svc.betaId]);
    const byId = new Map(products.map((p) => [p.source_id, p]));
    expect(lines.length).toBe(25);
    for (const l of lines) expect(byId.get(l.product_source_id)?.sku).toBe(l.raw.item_code);
    expect(products.filter((p) => p.active === false)).toHaveLength(1);
  });
});

describe('changes at the vendor reach the store on the next sync', () => {
  it('a Pax8 quantity change and a ConnectWise line rewrite', async () => {
    const pax8 = svc.services.simulators!.pax8 as Pax8Simulator;
    const subId = (loadVendorFixtures('sandbox-alpha', 'pax8').resources.subscriptions as Row[])[0].id as string;
    pax8.update('sandbox-alpha', 'subscriptions', subId, { quantity: 31 });

    const [cw]: Row[] = await svc.services.ds.query(`SELECT base_url FROM connections WHERE tenant_id = $1 AND connector = 'connectwise'`, [svc.alphaId]);
    await connectwiseAgreementWriter.rewriteLine({
      baseUrl: cw.base_url.replace(/\/$/, ''),
      credentials: { companyId: 'sandbox', publicKey: 'sandbox-public', privateKey: 'sandbox-private', clientId: '00000000-0000-0000-0000-000000000000' },
      http: new VendorHttpClient({ baseDelayMs: 5, maxRetries: 1 }),
    }, { marker: 'wm-billing-sync', agreementSourceId: '103', lineSourceId: '813', quantity: 14, effectiveDate: '2026-12-01', current: null });

    const res = await svc.api(`/tenants/${svc.alphaId}/sync`, { method: 'POST', json: {} });
    expect(res.status).toBe(200);
    const report = (connector: string, resource: string) =>
      res.body.connections.find((c: any) => c.connector === connector).resources.find((r: any) => r.resource === resource);
    expect(report('pax8', 'subscriptions')).toMatchObject({ updated: 1, created: 0 });
    expect(report('pax8', 'products')).toMatchObject({ updated: 0, created: 0 });
    expect(report('connectwise', 'agreement_lines')).toMatchObject({ updated: 1, created: 0 });
    const [sub] = await svc.services.ds.query('SELECT quantity FROM subscriptions WHERE tenant_id = $1 AND source_id = $2', [svc.alphaId, subId]);
    expect(sub.quantity).toBe(31);
    const [line] = await svc.services.ds.query('SELECT quantity FROM agreement_lines WHERE tenant_id = $1 AND source_id = $2', [svc.alphaId, '813']);
    expect(line.quantity).toBe(14);
  });
});
