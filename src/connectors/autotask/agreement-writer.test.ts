/**
 * Autotask agreement-line writes over real HTTP against the Autotask simulator (autotask-demo fixtures):
 * ContractServices for the line, ContractServiceAdjustments for its units, never a direct unit patch.
 * Each verb changes exactly the intended rows, a preview sends nothing, a line written with a marker is
 * found again (and a repeated add or rewrite lands once), and every rule is refused in Autotask's shape.
 */
import { startStandalone } from '../../simulators/kit';
import { AUTOTASK_DEMO_INSTANCE, loadAutotaskDemoFixtures } from '../../simulators/autotask/demo-fixtures';
import { createAutotaskSimulator, type AutotaskSimulator } from '../../simulators/autotask/simulator';
import type { AgreementLineChange, AgreementLineDraft, AgreementLineEnd, CatalogueProduct, SyncedLine } from '../agreement-write-types';
import { VendorHttpClient } from '../vendor-http';
import { VendorValidationError } from '../vendor-errors';
import type { WriteContext } from '../write-types';
import { autotaskAgreementWriter as at } from './agreement-writer';
import { autotaskConnector } from './connector';

const fixtures = loadAutotaskDemoFixtures();
const I = AUTOTASK_DEMO_INSTANCE;
const CREDENTIALS = { username: 'sandbox', secret: 'sandbox-secret', integrationCode: 'SANDBOX' };

let sim: AutotaskSimulator;
let server: { url: string; close: () => Promise<void> };

/** The vendor's day, fixed: the contract's periods before December are past or current, December is ahead. */
const TODAY = Date.parse('2026-11-20T12:00:00Z');

beforeAll(async () => {
  sim = createAutotaskSimulator({ now: () => TODAY });
  server = await startStandalone(sim);
});
afterAll(() => server.close());
beforeEach(() => {
  sim.reset();
  sim.faults.clear();
  sim.faults.resetLog();
  sim.seed(I, fixtures.resources);
});

function ctx(): WriteContext {
  return { baseUrl: `${server.url}/atservicesrest/v1.0`, credentials: CREDENTIALS, http: new VendorHttpClient({ baseDelayMs: 5, maxRetries: 1 }), now: () => TODAY };
}

type Row = Record<string, any>;
/** Recurring Service contract, monthly, 2026-01-01 to 2026-12-31. */
const CONTRACT = 29684001;
const BLOCK_HOURS = 29684004;
const INACTIVE = 29684006;

const rows = (entity: 'ContractServices' | 'ContractServiceUnits' | 'ContractServiceAdjustments') => sim.list(I, entity) as Row[];
const unitsOf = (csId: number) => rows('ContractServiceUnits').filter((u) => u.contractServiceID === csId)
  .sort((a, b) => String(a.startDate).localeCompare(String(b.startDate)));
const servicesOn = (contractId: number) => rows('ContractServices').filter((s) => s.contractID === contractId);
/** A service of the catalogue that the contract does not bill yet. */
const freeService = () => (sim.list(I, 'Services') as Row[]).find((s) => !servicesOn(CONTRACT).some((cs) => cs.serviceID === s.id))!;
const product = (s: Row): CatalogueProduct => ({ sourceId: String(s.id), name: s.name, sku: null, unitPrice: s.unitPrice, unitCost: s.unitCost, active: s.isActive });

let seq = 0;
const marker = () => `wm-atl-${++seq}-${Date.now().toString(36)}`;
function draft(over: Partial<AgreementLineDraft> = {}): AgreementLineDraft {
  const s = freeService();
  return {
    marker: marker(), agreementSourceId: String(CONTRACT), productSourceId: String(s.id), product: product(s), quantity: 8,
    unitPrice: 100, unitCost: null, effectiveDate: '2026-12-01', description: null, ...over,
  };
}
const firstLine = () => servicesOn(CONTRACT)[0];
const synced = (csId: number, day = '2026-12-01'): SyncedLine => {
  const u = unitsOf(csId).find((r) => String(r.endDate).slice(0, 10) >= day)!;
  return { quantity: u.units, unitPrice: null, unitCost: null, productSourceId: null, effectiveStart: '2026-01-01', effectiveEnd: '2026-12-31' };
};
const change = (csId: number, over: Partial<AgreementLineChange> = {}): AgreementLineChange => ({
  marker: marker(), agreementSourceId: String(CONTRACT), lineSourceId: String(csId), effectiveDate: '2026-12-01', current: synced(csId), ...over,
});
const end = (csId: number, over: Partial<AgreementLineEnd> = {}): AgreementLineEnd => ({
  marker: marker(), agreementSourceId: String(CONTRACT), lineSourceId: String(csId), endDate: '2026-12-01', current: synced(csId), ...over,
});

async function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}/atservicesrest/v1.0${path}`, {
    method,
    headers: { ApiIntegrationCode: CREDENTIALS.integrationCode, UserName: CREDENTIALS.username, Secret: CREDENTIALS.secret, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

async function refusal(p: Promise<unknown>): Promise<VendorValidationError> {
  const err = await p.then(() => null, (e: unknown) => e);
  expect(err).toBeInstanceOf(VendorValidationError);
  return err as VendorValidationError;
}

describe('add', () => {
  it('creates the contract service with the marker, then its units through one adjustment', async () => {
    const before = { services: rows('ContractServices'), units: rows('ContractServiceUnits') };
    const d = draft({ unitCost: 30, description: 'Firewall for the new branch' });
    const line = await at.addLine(ctx(), d);
    const id = Number(line.lineRef);
    expect(rows('ContractServices')).toHaveLength(before.services.length + 1);
    expect(rows('ContractServices').filter((s) => s.id !== id)).toEqual(before.services);
    expect(line.native).toMatchObject({
      id, contractID: CONTRACT, serviceID: Number(d.productSourceId), adjustedPrice: 100, unitPrice: d.product!.unitPrice,
      unitCost: 30, invoiceDescription: 'Firewall for the new branch', internalDescription: `[ref:${d.marker}]`,
    });
    // December only: the period of the effective date to the contract's end.
    expect(unitsOf(id).map((u) => [String(u.startDate).slice(0, 10), u.units, u.price, u.cost])).toEqual([['2026-12-01', 8, 800, 240]]);
    expect(rows('ContractServiceUnits').filter((u) => u.contractServiceID !== id)).toEqual(before.units);
    expect(rows('ContractServiceAdjustments')).toEqual([expect.objectContaining({ contractServiceID: id, unitChange: 8, adjustedUnitCost: 30 })]);
  });

  it('a repeated add finds its line by marker and lands once', async () => {
    const d = draft();
    const first = await at.addLine(ctx(), d);
    const again = await at.addLine(ctx(), d);
    expect(again.lineRef).toBe(first.lineRef);
    expect(servicesOn(CONTRACT).filter((s) => s.internalDescription === `[ref:${d.marker}]`)).toHaveLength(1);
    expect(unitsOf(Number(first.lineRef)).map((u) => u.units)).toEqual([8]);
    expect(rows('ContractServiceAdjustments')).toHaveLength(1);
    expect((await at.findLineByMarker(ctx(), String(CONTRACT), d.marker))?.lineRef).toBe(first.lineRef);
    expect(await at.findLineByMarker(ctx(), String(CONTRACT), 'wm-never-written')).toBeNull();
    expect(await at.findLineByMarker(ctx(), '29684002', d.marker)).toBeNull();
  });

  it('previews are the exact writes and send nothing', async () => {
    const d = draft({ unitCost: 30 });
    const cs = firstLine();
    const current = synced(cs.id).quantity!;
    const before = { services: rows('ContractServices'), units: rows('ContractServiceUnits') };
    expect(at.previewAdd(d)).toEqual([
      {
        method: 'POST', path: `/Contracts/${CONTRACT}/Services`,
        body: { contractID: CONTRACT, serviceID: Number(d.productSourceId), unitPrice: d.product!.unitPrice, adjustedPrice: 100, internalDescription: `[ref:${d.marker}]` },
      },
      {
        method: 'POST', path: '/ContractServiceAdjustments',
        body: { contractServiceID: expect.stringContaining('resolved at commit'), effectiveDate: '2026-12-01T00:00:00Z', unitChange: 8, adjustedUnitCost: 30 },
      },
    ]);
    expect(at.previewRewrite(change(cs.id, { quantity: current + 5, unitPrice: 30 }))).toEqual([
      { method: 'PATCH', path: `/Contracts/${CONTRACT}/Services`, body: { id: cs.id, adjustedPrice: 30 } },
      { method: 'POST', path: '/ContractServiceAdjustments', body: { contractServiceID: cs.id, effectiveDate: '2026-12-01T00:00:00Z', unitChange: 5 } },
    ]);
    expect(at.previewEnd(end(cs.id))).toEqual([
      { method: 'POST', path: '/ContractServiceAdjustments', body: { contractServiceID: cs.id, effectiveDate: '2026-12-01T00:00:00Z', unitChange: -current } },
    ]);
    expect(sim.faults.countRequests()).toBe(0);
    expect({ services: rows('ContractServices'), units: rows('ContractServiceUnits') }).toEqual(before);
  });
});

describe('rewrite and end', () => {
  it('rewrite: the price by PATCH of adjustedPrice, the quantity by an adjustment from the effective date', async () => {
    const cs = firstLine();
    const before = { services: rows('ContractServices'), units: unitsOf(cs.id), others: rows('ContractServiceUnits').filter((u) => u.contractServiceID !== cs.id) };
    const current = synced(cs.id).quantity!;
    await at.rewriteLine(ctx(), change(cs.id, { quantity: current + 5, unitPrice: 30 }));
    const after = unitsOf(cs.id);
    // Periods before December keep their units; December has five more, priced at the new price.
    expect(after.slice(0, -1)).toEqual(before.units.slice(0, -1).map((u) => (u.approveAndPostDate ? u : { ...u, price: Math.round(u.units * 30 * 100) / 100 })));
    expect(after[after.length - 1]).toMatchObject({ startDate: '2026-12-01T00:00:00Z', units: current + 5, price: Math.round((current + 5) * 30 * 100) / 100 });
    expect(rows('ContractServices').find((s) => s.id === cs.id)).toEqual({
      ...before.services.find((s) => s.id === cs.id), adjustedPrice: 30, internalCurrencyAdjustedPrice: 30,
    });
    expect(rows('ContractServices').filter((s) => s.id !== cs.id)).toEqual(before.services.filter((s) => s.id !== cs.id));
    expect(rows('ContractServiceUnits').filter((u) => u.contractServiceID !== cs.id)).toEqual(before.others);
    expect(rows('ContractServiceAdjustments')).toEqual([expect.objectContaining({ contractServiceID: cs.id, unitChange: 5 })]);

    // The same rewrite again changes nothing: the commit sends only the difference to the wanted units.
    await at.rewriteLine(ctx(), change(cs.id, { quantity: current + 5 }));
    expect(unitsOf(cs.id)[after.length - 1].units).toBe(current + 5);
    expect(rows('ContractServiceAdjustments')).toHaveLength(1);
  });

  it('end: the units go to zero from the end date, the line and earlier periods stay', async () => {
    const cs = firstLine();
    const before = { services: rows('ContractServices'), units: unitsOf(cs.id) };
    await at.endLine(ctx(), end(cs.id));
    const after = unitsOf(cs.id);
    expect(after.slice(0, -1)).toEqual(before.units.slice(0, -1));
    expect(after[after.length - 1]).toMatchObject({ units: 0, price: 0, cost: 0 });
    expect(rows('ContractServices')).toEqual(before.services);
    await at.endLine(ctx(), end(cs.id));
    expect(rows('ContractServiceAdjustments')).toHaveLength(1);

    // The next sync reads the line as ended with its last billed period.
    const lines = [];
    for await (const page of autotaskConnector.fetch('agreement_lines', { ...ctx(), statusMapping: {}, since: null })) lines.push(...page);
    expect(lines.find((l) => l.sourceId === String(cs.id))!.fields.effectiveEnd).toBe('2026-11-30');
  });
});

describe('vendor rules in the connector', () => {
  it('whole units, no cost rewrite, a catalogue service, real dates', () => {
    expect(at.checkAdd(draft({ quantity: 2.5 }))).toEqual([{ field: 'quantity', message: expect.stringContaining('whole numbers') }]);
    expect(at.checkAdd(draft({ productSourceId: '1', product: null }))).toEqual([{ field: 'product_source_id', message: expect.stringContaining('not an Autotask service') }]);
    expect(at.checkRewrite(change(firstLine().id, { unitCost: 3 }))).toEqual([{ field: 'unit_cost', message: expect.stringContaining('cannot be updated') }]);
    expect(at.checkEnd(end(firstLine().id, { endDate: '2025-12-31' }))).toEqual([{ field: 'effective_date', message: expect.stringContaining('before it starts') }]);
    expect(at.checkAdd(draft())).toEqual([]);
  });
});

describe('the simulator refuses what Autotask refuses, as {errors: [...]}', () => {
  it('a direct PATCH of a contract service\'s units, or of any field but adjustedPrice and invoiceDescription', async () => {
    const cs = firstLine();
    const before = { services: rows('ContractServices'), units: rows('ContractServiceUnits') };
    const units = await api('PATCH', `/Contracts/${CONTRACT}/Services`, { id: cs.id, units: 50 });
    expect(units).toEqual({ status: 500, body: { errors: ['The units of a contract service cannot be updated; add or remove units with a ContractServiceAdjustments entity.'] } });
    const ro = await api('PATCH', `/Contracts/${CONTRACT}/Services`, { id: cs.id, unitPrice: 1, serviceID: 29686001 });
    expect(ro.status).toBe(500);
    expect(ro.body.errors).toEqual([expect.stringContaining('unitPrice is read-only'), expect.stringContaining('serviceID is read-only')]);
    expect({ services: rows('ContractServices'), units: rows('ContractServiceUnits') }).toEqual(before);
  });

  it('required fields, existing references, a recurring service contract that is active', async () => {
    expect(await api('POST', `/Contracts/${CONTRACT}/Services`, {})).toEqual({ status: 500, body: { errors: ['serviceID is required.'] } });
    expect((await api('POST', '/ContractServiceAdjustments', { contractServiceID: firstLine().id })).body.errors)
      .toEqual(['effectiveDate is required.', 'unitChange is required.']);
    const s = freeService();
    expect((await api('POST', `/Contracts/${CONTRACT}/Services`, { serviceID: 1 })).body.errors).toEqual(['serviceID 1 does not reference an existing service.']);
    expect((await api('POST', `/Contracts/${BLOCK_HOURS}/Services`, { serviceID: s.id })).body.errors)
      .toEqual([expect.stringContaining('not a Recurring Service contract')]);
    expect((await api('POST', `/Contracts/${INACTIVE}/Services`, { serviceID: s.id })).body.errors)
      .toEqual(expect.arrayContaining([`Contract ${INACTIVE} is inactive; its services cannot be changed.`]));
    expect((await api('POST', `/Contracts/${CONTRACT}/Services`, { serviceID: firstLine().serviceID })).body.errors)
      .toEqual([expect.stringContaining('already on contract')]);
    sim.update(I, 'Services', s.id, { isActive: false });
    expect((await api('POST', `/Contracts/${CONTRACT}/Services`, { serviceID: s.id })).body.errors).toEqual([`Service ${s.id} is inactive.`]);
    const err = await refusal(at.addLine(ctx(), draft({ agreementSourceId: String(INACTIVE) })));
    expect(err.problems[0].field).toBe('agreement_source_id');
  });

  it('dates valid and within the contract, units never below zero, adjustments never queried', async () => {
    const cs = firstLine();
    expect((await api('POST', '/ContractServiceAdjustments', { contractServiceID: cs.id, effectiveDate: 'soon', unitChange: 1 })).body.errors)
      .toEqual(['effectiveDate is not a valid date and time.']);
    expect((await api('POST', '/ContractServiceAdjustments', { contractServiceID: cs.id, effectiveDate: '2027-02-01', unitChange: 1 })).body.errors)
      .toEqual([expect.stringContaining('within the contract\'s dates')]);
    expect((await api('POST', '/ContractServiceAdjustments', { contractServiceID: cs.id, effectiveDate: '2026-12-01', unitChange: -1000 })).body.errors)
      .toEqual([expect.stringContaining('fewer than zero units')]);
    expect((await api('POST', '/ContractServiceAdjustments', { contractServiceID: cs.id, effectiveDate: '2026-12-01', unitChange: 1.5 })).body.errors)
      .toEqual(['unitChange must be an integer.']);
    expect(rows('ContractServiceAdjustments')).toEqual([]);
    const q = await api('POST', '/ContractServiceAdjustments/query', { filter: [{ op: 'exist', field: 'id' }] });
    expect(q).toEqual({ status: 405, body: { errors: [expect.stringContaining('can only be created')] } });
    const err = await refusal(at.rewriteLine(ctx(), change(cs.id, { quantity: 3, effectiveDate: '2027-06-01' })));
    expect(err.problems).toEqual([{ field: 'effective_date', message: expect.stringContaining('within the contract') }]);
  });

  it('a line of another contract is not this agreement\'s', async () => {
    const other = servicesOn(29684002)[0];
    const err = await refusal(at.endLine(ctx(), end(other.id, { current: null })));
    expect(err.problems).toEqual([{ field: 'line_source_id', message: expect.stringContaining('not a line of contract 29684001') }]);
  });
});

describe('contract services are written through their contract (Autotask REST swagger: POST/PATCH /Contracts/{parentId}/Services)', () => {
  it('the root POST and PATCH /ContractServices answer 404, as Autotask has no such operation, and change nothing', async () => {
    const before = { services: rows('ContractServices'), units: rows('ContractServiceUnits') };
    const s = freeService();
    expect((await api('POST', '/ContractServices', { contractID: CONTRACT, serviceID: s.id })).status).toBe(404);
    expect((await api('PATCH', '/ContractServices', { id: firstLine().id, adjustedPrice: 1 })).status).toBe(404);
    // A line of another contract is not updated through this one.
    expect((await api('PATCH', `/Contracts/${CONTRACT}/Services`, { id: servicesOn(29684002)[0].id, adjustedPrice: 1 })).status).toBe(500);
    expect({ services: rows('ContractServices'), units: rows('ContractServiceUnits') }).toEqual(before);
  });

  it('@apigrate/autotask-restapi, an independent client, creates and updates a contract service against the simulator', async () => {
    // The package has no type declarations; it is loaded as it is published (CommonJS).
    const name: string = '@apigrate/autotask-restapi';
    const { AutotaskRestApi } = (await import(name)) as { AutotaskRestApi: new (...args: unknown[]) => any };
    // It asks zoneInformation for the zone's URL first, then calls `<zone url>V1.0/...`.
    const client = new AutotaskRestApi(CREDENTIALS.username, CREDENTIALS.secret, CREDENTIALS.integrationCode, { base_url: `${server.url}/atservicesrest/` });
    const s = freeService();
    const created = await client.ContractServices.create(CONTRACT, { contractID: CONTRACT, serviceID: s.id, adjustedPrice: 42, invoiceDescription: 'Backup' });
    expect(created).toEqual({ itemId: expect.any(Number) });
    expect(rows('ContractServices').find((r) => r.id === created.itemId)).toMatchObject({ contractID: CONTRACT, serviceID: s.id, adjustedPrice: 42 });
    expect(await client.ContractServices.update(CONTRACT, { id: created.itemId, adjustedPrice: 45 })).toEqual({ itemId: created.itemId });
    expect((await client.ContractServices.get(created.itemId)).item).toMatchObject({ id: created.itemId, adjustedPrice: 45, invoiceDescription: 'Backup' });
    // An unknown id is 404 at Autotask, which the client reads as "none".
    expect(await client.ContractServices.get(999_999_999)).toBeNull();
  });

  it('the connector adds and reprices a line through its contract', async () => {
    const line = await at.addLine(ctx(), draft());
    await at.rewriteLine(ctx(), change(Number(line.lineRef), { unitPrice: 61 }));
    expect(rows('ContractServices').find((r) => r.id === Number(line.lineRef))).toMatchObject({ contractID: CONTRACT, adjustedPrice: 61 });
  });
});

describe('an unknown line', () => {
  it('Autotask answers GET ContractServices/{id} of an unknown id with 404; the writer refuses it as a validation problem', async () => {
    expect((await api('GET', '/ContractServices/999999999')).status).toBe(404);
    const before = rows('ContractServiceAdjustments');
    const line = { marker: marker(), agreementSourceId: String(CONTRACT), lineSourceId: '999999999', current: null };
    for (const p of [at.endLine(ctx(), { ...line, endDate: '2026-12-01' }), at.rewriteLine(ctx(), { ...line, effectiveDate: '2026-12-01', quantity: 2 })]) {
      const err = await refusal(p);
      expect(err.problems).toEqual([{ field: 'line_source_id', message: expect.stringContaining('is not a line of contract') }]);
    }
    expect(rows('ContractServiceAdjustments')).toEqual(before);
  });
});

describe('the end of a replace', () => {
  it('is not sent when Autotask would refuse the add after it: the old line keeps its units', async () => {
    const [old, other] = servicesOn(CONTRACT);
    const before = { services: rows('ContractServices'), units: rows('ContractServiceUnits') };
    // The new service is already on the contract: Autotask refuses a second line of it.
    const add = draft({ productSourceId: String(other.serviceID), product: product((sim.list(I, 'Services') as Row[]).find((s) => s.id === other.serviceID)!) });
    const err = await refusal(at.endLine(ctx(), end(old.id, { replacedBy: add })));
    expect(err.problems).toEqual([{ field: 'product_source_id', message: expect.stringContaining('already on contract') }]);
    // A service made inactive at Autotask after the catalogue was synced.
    const [inactive, free] = (sim.list(I, 'Services') as Row[]).filter((s) => s.isActive !== false && !servicesOn(CONTRACT).some((cs) => cs.serviceID === s.id));
    sim.update(I, 'Services', inactive.id, { isActive: false });
    const refused = await refusal(at.endLine(ctx(), end(old.id, { replacedBy: draft({ productSourceId: String(inactive.id), product: product(inactive) }) })));
    expect(refused.problems).toEqual([{ field: 'product_source_id', message: expect.stringContaining('inactive') }]);
    expect({ services: rows('ContractServices'), units: rows('ContractServiceUnits') }).toEqual(before);
    expect(rows('ContractServiceAdjustments')).toEqual([]);

    // An add Autotask takes: the end lands, then the add; a repeat of both lands nothing more.
    const fresh = draft({ productSourceId: String(free.id), product: product(free) });
    await at.endLine(ctx(), end(old.id, { replacedBy: fresh }));
    await at.addLine(ctx(), fresh);
    await at.endLine(ctx(), end(old.id, { replacedBy: fresh }));
    await at.addLine(ctx(), fresh);
    expect(unitsOf(old.id).find((u) => String(u.startDate).startsWith('2026-12'))!.units).toBe(0);
    expect(servicesOn(CONTRACT).filter((s) => s.internalDescription === `[ref:${fresh.marker}]`)).toHaveLength(1);
  });
});

describe('marker look-ups', () => {
  it('search the bare marker: at Autotask a `contains` is a LIKE where `[` opens a character class', async () => {
    await at.addLine(ctx(), draft());
    const line = await at.addLine(ctx(), draft());
    const marker = String(rows('ContractServices').find((r) => r.id === Number(line.lineRef))!.internalDescription).slice(5, -1);
    const search = (value: string) => api('POST', '/ContractServices/query', { filter: [{ op: 'contains', field: 'internalDescription', value }] });
    // The bracketed line is a one-character class: it finds every description holding one of its letters.
    expect((await search(`[ref:${marker}]`)).body.items.length).toBeGreaterThan(1);
    expect((await search(marker)).body.items.map((r: Row) => r.id)).toEqual([Number(line.lineRef)]);
    expect((await at.findLineByMarker(ctx(), String(CONTRACT), marker))?.lineRef).toBe(line.lineRef);
  });
});
