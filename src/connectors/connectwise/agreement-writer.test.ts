/**
 * ConnectWise agreement-line writes over real HTTP against the ConnectWise simulator (sandbox-alpha
 * fixtures): each verb changes exactly the intended addition, a preview sends nothing, a line written
 * with a marker is found again, and every simulator rule is refused in ConnectWise's own shape.
 */
import { startStandalone } from '../../simulators/kit';
import { createConnectWiseSimulator } from '../../simulators/connectwise/simulator';
import { loadConnectWiseFixtures } from '../../simulators/connectwise/fixtures';
import type { CwRecord } from '../../simulators/connectwise/store';
import type { AgreementLineChange, AgreementLineDraft, AgreementLineEnd, CatalogueProduct } from '../agreement-write-types';
import { VendorHttpClient, VendorHttpError } from '../vendor-http';
import { VendorValidationError } from '../vendor-errors';
import type { WriteContext } from '../write-types';
import { cwHeaders } from './client';
import { connectwiseAgreementWriter as cw } from './agreement-writer';

const INSTANCE = 'sandbox-alpha';
const { resources: fixtures } = loadConnectWiseFixtures(INSTANCE);
const sim = createConnectWiseSimulator();
let mount: string;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ url: mount, close } = await startStandalone(sim));
});
afterAll(() => close());
beforeEach(() => {
  sim.reset();
  sim.seed(INSTANCE, fixtures);
  sim.faults.resetLog();
});

const CREDENTIALS = { companyId: 'sandbox', publicKey: 'sandbox-public', privateKey: 'sandbox-private', clientId: '00000000-0000-0000-0000-000000000000' };
function ctx(): WriteContext {
  return { baseUrl: `${mount}/v4_6_release/apis/3.0`, credentials: CREDENTIALS, http: new VendorHttpClient({ baseDelayMs: 5, maxRetries: 1 }) };
}

/** Active agreement 103 (Fabrikam, Microsoft 365 Licensing); 106 is Cancelled. */
const ACTIVE = '103';
const CANCELLED = '106';
/** Catalogue item 13 (Teams Phone Standard) is on no agreement; 12 is retired (inactive). */
const catalogue = (id: number): CatalogueProduct => {
  const c = sim.get(INSTANCE, 'catalog', id)!;
  return { sourceId: String(id), name: c.description, sku: c.identifier, unitPrice: c.price, unitCost: c.cost, active: !c.inactiveFlag };
};

let seq = 0;
const marker = () => `wm-cwl-${++seq}-${Date.now().toString(36)}`;
const draft = (over: Partial<AgreementLineDraft> = {}): AgreementLineDraft => ({
  marker: marker(), agreementSourceId: ACTIVE, productSourceId: '13', product: catalogue(13), quantity: 12,
  unitPrice: 9.5, unitCost: 7.65, effectiveDate: '2026-12-01', description: null, ...over,
});
const change = (lineRef: string, over: Partial<AgreementLineChange> = {}): AgreementLineChange => ({
  marker: marker(), agreementSourceId: ACTIVE, lineSourceId: lineRef, effectiveDate: '2026-12-01', current: null, ...over,
});
const end = (lineRef: string, over: Partial<AgreementLineEnd> = {}): AgreementLineEnd => ({
  marker: marker(), agreementSourceId: ACTIVE, lineSourceId: lineRef, endDate: '2026-12-31', current: null, ...over,
});

const additions = () => sim.list(INSTANCE, 'additions');
const without = (rec: CwRecord, ...keys: string[]) => Object.fromEntries(Object.entries(rec).filter(([k]) => !keys.includes(k)));

/** A raw ConnectWise call (to see the simulator's refusal shape without the connector). */
async function raw(method: string, path: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${mount}/v4_6_release/apis/3.0${path}`, {
    method, headers: { ...cwHeaders(CREDENTIALS), 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

async function refusal(p: Promise<unknown>): Promise<VendorValidationError> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(VendorValidationError);
  return err as VendorValidationError;
}

describe('add', () => {
  it('posts one addition with product, billCustomer and the marker, and changes nothing else', async () => {
    const before = additions();
    const d = draft({ description: 'Teams Phone for the front desk' });
    const line = await cw.addLine(ctx(), d);
    const after = additions();
    expect(after).toHaveLength(before.length + 1);
    expect(after.filter((a) => String(a.id) !== line.lineRef)).toEqual(before);
    const added = sim.get(INSTANCE, 'additions', Number(line.lineRef))!;
    expect(added).toMatchObject({
      agreementId: 103, product: { id: 13, identifier: 'MS-TEAMS-PH' }, quantity: 12, unitPrice: 9.5, unitCost: 7.65,
      billCustomer: 'Billable', effectiveDate: '2026-12-01T00:00:00Z', extPrice: 114, invoiceDescription: 'Teams Phone for the front desk',
      description: `Teams Phone Standard [ref:${d.marker}]`,
    });
    expect(added.cancelledDate).toBeUndefined();
    expect(line.native).toEqual(added);
  });

  it('a preview is the exact request and sends nothing', async () => {
    const d = draft();
    const before = additions();
    expect(cw.previewAdd(d)).toEqual([{
      method: 'POST', path: '/finance/agreements/103/additions',
      body: {
        product: { id: 13 }, billCustomer: 'Billable', quantity: 12, unitPrice: 9.5, unitCost: 7.65, effectiveDate: '2026-12-01T00:00:00Z',
        description: `Teams Phone Standard [ref:${d.marker}]`,
      },
    }]);
    expect(cw.previewRewrite(change('812', { quantity: 60 }))[0]).toEqual({
      method: 'PATCH', path: '/finance/agreements/103/additions/812', body: [{ op: 'replace', path: '/quantity', value: 60 }],
    });
    expect(cw.previewEnd(end('812'))[0]).toEqual({
      method: 'PATCH', path: '/finance/agreements/103/additions/812', body: [{ op: 'replace', path: '/cancelledDate', value: '2026-12-31T00:00:00Z' }],
    });
    expect(sim.faults.countRequests()).toBe(0);
    expect(additions()).toEqual(before);
  });

  it('reconcile finds the line written with a marker, and nothing for a marker never written', async () => {
    const d = draft();
    const line = await cw.addLine(ctx(), d);
    await cw.addLine(ctx(), draft());
    expect(await cw.findLineByMarker(ctx(), ACTIVE, d.marker)).toEqual({ lineRef: line.lineRef, native: sim.get(INSTANCE, 'additions', Number(line.lineRef)) });
    expect(await cw.findLineByMarker(ctx(), ACTIVE, 'wm-never-written')).toBeNull();
    expect(await cw.findLineByMarker(ctx(), '101', d.marker)).toBeNull();
  });

  it('a retried add finds its line with a bracket-free search and lands once, on an agreement with a full page of other lines', async () => {
    // ConnectWise's `contains` is a SQL Server LIKE: `[ref:...]` would be a one-character class, matching
    // every line that holds one of its letters, and the line written last would fall past the first page.
    const product = sim.get(INSTANCE, 'catalog', 13)!;
    for (let i = 0; i < 1000; i++) {
      sim.create(INSTANCE, 'additions', { agreementId: Number(ACTIVE), product: { id: 13, identifier: product.identifier }, quantity: 1, description: `Seat ${i}` });
    }
    const d = draft();
    // The add lands; its answer is lost.
    await cw.addLine(ctx(), d);
    // The retry looks for its marker before sending again.
    const found = await cw.findLineByMarker(ctx(), ACTIVE, d.marker);
    if (!found) await cw.addLine(ctx(), d);
    expect(additions().filter((a) => String(a.description).includes(`[ref:${d.marker}]`))).toHaveLength(1);
    expect(found?.native.description).toBe(`Teams Phone Standard [ref:${d.marker}]`);
  });
});

describe('rewrite and end', () => {
  it('rewrite changes quantity, price and cost of that addition only (amounts follow)', async () => {
    const before = additions();
    const line = await cw.rewriteLine(ctx(), change('812', { quantity: 60, unitPrice: 21, unitCost: 18 }));
    const after = sim.get(INSTANCE, 'additions', 812)!;
    expect(line.native).toEqual(after);
    const old = before.find((a) => a.id === 812)!;
    expect(without(after, 'quantity', 'unitPrice', 'unitCost', 'extPrice', 'extCost', 'margin', '_info')).toEqual(
      without(old, 'quantity', 'unitPrice', 'unitCost', 'extPrice', 'extCost', 'margin', '_info'));
    expect(after).toMatchObject({ quantity: 60, unitPrice: 21, unitCost: 18, extPrice: 1260, extCost: 1080, margin: 180 });
    expect(additions().filter((a) => a.id !== 812)).toEqual(before.filter((a) => a.id !== 812));
  });

  it('end sets cancelledDate and nothing else', async () => {
    const before = additions();
    await cw.endLine(ctx(), end('813', { endDate: '2026-12-31' }));
    const after = sim.get(INSTANCE, 'additions', 813)!;
    const old = before.find((a) => a.id === 813)!;
    expect(without(after, 'cancelledDate', '_info')).toEqual(without(old, 'cancelledDate', '_info'));
    expect(after.cancelledDate).toBe('2026-12-31T00:00:00Z');
    expect(additions().filter((a) => a.id !== 813)).toEqual(before.filter((a) => a.id !== 813));
  });
});

describe('vendor rules in the connector', () => {
  it('refuses an unknown or retired product, negative or non-finite numbers and a bad date', () => {
    expect(cw.checkAdd(draft({ productSourceId: '99', product: null }))).toEqual([
      { field: 'product_source_id', message: expect.stringContaining('not in the ConnectWise product catalog') },
    ]);
    expect(cw.checkAdd(draft({ productSourceId: '12', product: catalogue(12) }))).toEqual([
      { field: 'product_source_id', message: expect.stringContaining('inactive') },
    ]);
    expect(cw.checkAdd(draft({ quantity: -1, unitPrice: Number.NaN, effectiveDate: '2026-02-30' })).map((p) => p.field))
      .toEqual(['quantity', 'unit_price', 'effective_date']);
    expect(cw.checkRewrite(change('812'))).toEqual([{ field: 'quantity', message: expect.any(String) }]);
    expect(cw.checkEnd(end('812', { endDate: '2025-01-01', current: {
      quantity: 55, unitPrice: 22, unitCost: 18.7, productSourceId: '1', effectiveStart: '2025-06-15', effectiveEnd: null,
    } }))).toEqual([{ field: 'effective_date', message: expect.stringContaining('before it starts') }]);
    expect(cw.checkAdd(draft())).toEqual([]);
  });
});

describe('the simulator refuses what ConnectWise refuses, in its shape', () => {
  const invalid = (field: string) => ({
    code: 'InvalidObject', message: 'addition object is invalid',
    errors: expect.arrayContaining([expect.objectContaining({ resource: 'addition', field })]),
  });

  it('product and billCustomer are required', async () => {
    const res = await raw('POST', '/finance/agreements/103/additions', { quantity: 1 });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 'InvalidObject', message: 'addition object is invalid',
      errors: [
        { code: 'Required', message: 'The product field is required.', resource: 'addition', field: 'product' },
        { code: 'Required', message: 'The billCustomer field is required.', resource: 'addition', field: 'billCustomer' },
      ],
    });
  });

  it('the product must be in the catalogue and active', async () => {
    for (const product of [{ id: 999 }, { id: 12 }, { identifier: 'NOPE' }]) {
      const res = await raw('POST', '/finance/agreements/103/additions', { product, billCustomer: 'Billable' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(invalid('product'));
    }
    const err = await refusal(cw.addLine(ctx(), draft({ productSourceId: '999' })));
    expect(err.problems).toEqual([{ field: 'product_source_id', message: expect.stringContaining('catalog') }]);
  });

  it('dates must be dates, and cancelledDate not before effectiveDate', async () => {
    const bad = await raw('POST', '/finance/agreements/103/additions', { product: { id: 13 }, billCustomer: 'Billable', effectiveDate: 'next week' });
    expect(bad.body).toEqual(invalid('effectiveDate'));
    const early = await raw('PATCH', '/finance/agreements/103/additions/812', [{ op: 'replace', path: '/cancelledDate', value: '2025-01-01T00:00:00Z' }]);
    expect(early.status).toBe(400);
    expect(early.body).toEqual(invalid('cancelledDate'));
    const err = await refusal(cw.endLine(ctx(), end('812', { endDate: '2025-01-01' })));
    expect(err.problems).toEqual([{ field: 'effective_date', message: 'The cancelled date cannot be before the effective date.' }]);
    expect(sim.get(INSTANCE, 'additions', 812)!.cancelledDate).toBeUndefined();
  });

  it('a cancelled agreement takes no addition and no change to one', async () => {
    const before = additions();
    const err = await refusal(cw.addLine(ctx(), draft({ agreementSourceId: CANCELLED })));
    expect(err.problems).toEqual([{ field: 'agreement_source_id', message: expect.stringContaining('cancelled') }]);
    expect(err.vendorBody).toEqual(invalid('agreementId'));
    await refusal(cw.rewriteLine(ctx(), change('822', { agreementSourceId: CANCELLED, quantity: 3 })));
    expect(additions()).toEqual(before);
  });

  it('read-only paths, unknown agreements and additions of another agreement', async () => {
    const ro = await raw('PATCH', '/finance/agreements/103/additions/812', [{ op: 'replace', path: '/extPrice', value: 1 }]);
    expect(ro.body).toEqual(invalid('extPrice'));
    const unknown = await raw('POST', '/finance/agreements/999/additions', { product: { id: 13 }, billCustomer: 'Billable' });
    expect(unknown).toEqual({ status: 404, body: { code: 'NotFound', message: 'Agreement ID 999 not found' } });
    const other = await cw.rewriteLine(ctx(), change('801', { quantity: 1 })).catch((e: unknown) => e);
    expect(other).toBeInstanceOf(VendorHttpError);
    expect((other as VendorHttpError).status).toBe(404);
  });
});
