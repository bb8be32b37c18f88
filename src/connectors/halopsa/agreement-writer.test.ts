/**
 * HaloPSA (limited connector) agreement-line writes against the Halo simulator, the fixture host:
 * recurring-invoice lines of a contract through POST /api/RecurringInvoice/Lines. Previews send nothing;
 * commits change exactly the intended line; the marker finds a written line; the simulator refuses in
 * Halo's shape (400 with a message).
 */
import { startStandalone } from '../../simulators/kit';
import { loadHaloFixtures } from '../../simulators/halopsa/fixtures';
import { createHaloPsaSimulator, type HaloPsaSimulator } from '../../simulators/halopsa/simulator';
import type { HaloRecord } from '../../simulators/halopsa/store';
import type { AgreementLineDraft, CatalogueProduct } from '../agreement-write-types';
import { capabilitiesOf, CONNECTOR_NAMES, vendorWrite } from '../registry';
import { VendorHttpClient } from '../vendor-http';
import { VendorValidationError } from '../vendor-errors';
import type { WriteContext } from '../write-types';
import { haloPsaAgreementWriter as halo } from './agreement-writer';

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

function ctx(): WriteContext {
  return { baseUrl: server.url, credentials: { clientId: 'sandbox', clientSecret: 'sandbox-secret' }, http: new VendorHttpClient({ baseDelayMs: 5, maxRetries: 1 }) };
}

/** Contract 31 (MSA-HDG-2026, active, recurring invoice 601); 36 (MSA-HCT-2024) is inactive. */
const ACTIVE = '31';
const INACTIVE = '36';
const item = (id: number): CatalogueProduct => {
  const i = sim.get(INSTANCE, 'items', id)!;
  return { sourceId: String(id), name: i.name, sku: i.internalreference, unitPrice: i.recurringprice, unitCost: i.recurringcost, active: !i.inactive };
};
let seq = 0;
const marker = () => `wm-hal-${++seq}-${Date.now().toString(36)}`;
/** Item 107 is the managed firewall (FW-MGMT), not on contract 31. */
const draft = (over: Partial<AgreementLineDraft> = {}): AgreementLineDraft => ({
  marker: marker(), agreementSourceId: ACTIVE, productSourceId: '107', product: item(107), quantity: 1, unitPrice: 65, unitCost: 22,
  effectiveDate: '2026-12-01', description: null, ...over,
});
const invoices = () => sim.list(INSTANCE, 'recurring_invoices');
const linesOf = (invoiceId: number) => (invoices().find((i) => i.id === invoiceId)!.lines as HaloRecord[]);

async function post(body: unknown): Promise<{ status: number; body: unknown }> {
  const token = await fetch(`${server.url}/auth/token`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=client_credentials&client_id=sandbox&client_secret=sandbox-secret&scope=all',
  }).then((r) => r.json() as Promise<{ access_token: string }>);
  const res = await fetch(`${server.url}/api/RecurringInvoice/Lines`, {
    method: 'POST', headers: { authorization: `Bearer ${token.access_token}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

describe('halopsa agreement lines on the fixture host', () => {
  it('is registered as the writer that commits on its fixture host only', () => {
    const d = draft();
    expect(vendorWrite('halopsa', 'agreement.line.add').preview(d)).toEqual(halo.previewAdd(d));
    expect(capabilitiesOf('halopsa').commits).toBe('fixture_only');
    const writers = CONNECTOR_NAMES.filter((n) => { try { vendorWrite(n, 'agreement.line.add'); return true; } catch { return false; } });
    expect(writers.sort()).toEqual(['autotask', 'connectwise', 'halopsa', 'kaseyabms']);
    expect(() => vendorWrite('ninjaone', 'agreement.line.add')).toThrow();
  });

  it('previews send nothing', () => {
    const d = draft();
    expect(halo.previewAdd(d)[1]).toEqual({
      method: 'POST', path: '/api/RecurringInvoice/Lines',
      body: [{
        ihid: expect.stringContaining('resolved at commit'), contract_id: 31, _itemid: 107, item_code: 'FW-MGMT',
        item_shortdescription: 'Managed firewall (FortiGate 60F)', qty_order: 1, unit_price: 65, unit_cost: 22,
        startdate: '2026-12-01T00:00:00', comment_1: `[ref:${d.marker}]`,
      }],
    });
    halo.previewRewrite({ marker: marker(), agreementSourceId: ACTIVE, lineSourceId: '7001', quantity: 20, effectiveDate: '2026-12-01', current: null });
    halo.previewEnd({ marker: marker(), agreementSourceId: ACTIVE, lineSourceId: '7001', endDate: '2026-12-31', current: null });
    expect(sim.faults.countRequests()).toBe(0);
  });

  it('refuses to end a line before the day it starts, before anything is sent', () => {
    const current = { quantity: 1, unitPrice: 65, unitCost: 22, productSourceId: '107', effectiveStart: '2026-12-01', effectiveEnd: null };
    expect(halo.checkEnd({ marker: marker(), agreementSourceId: ACTIVE, lineSourceId: '7001', endDate: '2026-11-30', current }))
      .toEqual([{ field: 'effective_date', message: expect.stringContaining('before it starts (2026-12-01)') }]);
    expect(halo.checkEnd({ marker: marker(), agreementSourceId: ACTIVE, lineSourceId: '7001', endDate: '2026-12-01', current })).toEqual([]);
  });

  it('add, rewrite and end change only their line; the marker finds the added line', async () => {
    const before = linesOf(601);
    const d = draft();
    const added = await halo.addLine(ctx(), d);
    expect(linesOf(601).slice(0, -1)).toEqual(before);
    expect(linesOf(601).at(-1)).toEqual({
      id: Number(added.lineRef), ihid: 601, item_code: 'FW-MGMT', item_shortdescription: 'Managed firewall (FortiGate 60F)', qty_order: 1,
      unit_price: 65, unit_cost: 22, net_amount: 65, contract_id: 31, startdate: '2026-12-01T00:00:00', enddate: '2026-12-31T00:00:00',
      comment_1: `[ref:${d.marker}]`,
    });
    expect((await halo.findLineByMarker(ctx(), ACTIVE, d.marker))?.lineRef).toBe(added.lineRef);
    expect(await halo.findLineByMarker(ctx(), ACTIVE, 'wm-never-written')).toBeNull();

    await halo.rewriteLine(ctx(), { marker: marker(), agreementSourceId: ACTIVE, lineSourceId: '7001', quantity: 20, effectiveDate: '2026-12-01', current: null });
    expect(linesOf(601).find((l) => l.id === 7001)).toEqual({ ...before.find((l) => l.id === 7001), qty_order: 20, net_amount: 342 });
    await halo.endLine(ctx(), { marker: marker(), agreementSourceId: ACTIVE, lineSourceId: '7002', endDate: '2026-11-30', current: null });
    expect(linesOf(601).find((l) => l.id === 7002)).toEqual({ ...before.find((l) => l.id === 7002), enddate: '2026-11-30T00:00:00' });
    expect(linesOf(601).filter((l) => ![7001, 7002, Number(added.lineRef)].includes(l.id as number))).toEqual(before.filter((l) => ![7001, 7002].includes(l.id as number)));
  });

  it('refuses what the simulator refuses, as Halo does (400 and a message)', async () => {
    const before = invoices();
    expect(await post([{ ihid: 606, _itemid: 107 }])).toEqual({ status: 400, body: 'Contract MSA-HCT-2024 is inactive; its lines cannot be changed' });
    expect(await post([{ ihid: 601, _itemid: 999 }])).toEqual({ status: 400, body: 'Item 999 does not exist' });
    expect(await post([{ ihid: 601, _itemid: 111 }])).toEqual({ status: 400, body: 'Item Legacy antivirus (retired) is inactive' });
    expect(await post([{ ihid: 601 }])).toEqual({ status: 400, body: 'An item is required (_itemid or item_code)' });
    expect(await post([{ id: 7001, enddate: '2025-01-01T00:00:00' }])).toEqual({ status: 400, body: 'The end date of a line cannot be before its start date' });
    expect(await post([{ id: 7001, qty_order: -2 }])).toEqual({ status: 400, body: 'qty_order cannot be negative' });
    expect(await post([{ id: 7001, startdate: '2026-02-30' }])).toEqual({ status: 400, body: 'startdate is not a valid date' });
    // One bad element refuses the whole batch.
    expect((await post([{ id: 7001, qty_order: 3 }, { id: 99999, qty_order: 1 }])).status).toBe(404);
    expect(invoices()).toEqual(before);
    const err = await halo.addLine(ctx(), draft({ agreementSourceId: INACTIVE })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VendorValidationError);
    expect((err as VendorValidationError).problems[0].field).toBe('agreement_source_id');
    const other = await halo.endLine(ctx(), { marker: marker(), agreementSourceId: ACTIVE, lineSourceId: '7010', endDate: '2026-12-31', current: null })
      .catch((e: unknown) => e);
    expect((other as VendorValidationError).problems).toEqual([{ field: 'line_source_id', message: expect.stringContaining('not a line of HaloPSA contract 31') }]);
  });
});
