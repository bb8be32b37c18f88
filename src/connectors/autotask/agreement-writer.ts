/**
 * Autotask agreement lines: the services of a Recurring Service contract (docs/architecture.md, Agreements and billing). Autotask
 * keeps a line in two places, and this writer follows its documented rules (Autotask REST API entity
 * pages ContractServices and ContractServiceAdjustments; docs/vendors.md, KelvinTegelaar/AutotaskAPI issue 28):
 *
 * - ContractServices is the line: created with contractID and serviceID (required; the contract must be
 *   a Recurring Service contract) plus unitPrice, adjustedPrice, invoiceDescription, internalDescription.
 *   It holds no units, and on update only adjustedPrice and invoiceDescription may change.
 * - Units change only through ContractServiceAdjustments (contractServiceID, effectiveDate, unitChange,
 *   adjustedUnitPrice, adjustedUnitCost), which can only be created, never queried or updated. The
 *   resulting units per billing period are read back from ContractServiceUnits.
 *
 * Verbs:
 * - add: POST Contracts/{contractID}/Services (marker in `internalDescription`, which never prints on an
 *   invoice), then POST ContractServiceAdjustments with unitChange = quantity (and adjustedUnitCost when a
 *   cost is given). Contract services are created and updated only through their contract: the Autotask
 *   REST swagger (v1.json, as kept in KelvinTegelaar/AutotaskAPI) lists POST/PATCH
 *   /Contracts/{parentId}/Services and no root POST/PATCH ContractServices.
 * - rewrite: price -> PATCH Contracts/{contractID}/Services `adjustedPrice`; quantity -> one adjustment of
 *   (new - current) units from effectiveDate. The unit cost is the service's (ContractServices.unitCost is
 *   read-only), so a cost rewrite is refused.
 * - end: Autotask has no end date on a contract service; the documented way to stop billing it is to
 *   remove its units, so end = an adjustment of -(current units) effective at the end date.
 * - replace (the pipeline's end then add): the end of a replace first checks, with reads, that Autotask
 *   will take the add (addRefusals), so an add Autotask would refuse leaves the old line's units intact.
 *
 * Unit changes are deltas, so a blind retry would apply them twice: the commit reads the current units of
 * the period containing the effective date (ContractServiceUnits) and sends only the difference to the
 * wanted quantity, which makes add, rewrite and end safe to repeat. `add` also looks for its marker
 * first and reuses a line it already created. Those reads precede the writes a preview shows; a preview's
 * unitChange uses the synced quantity (the commit uses the live one).
 */
import {
  type AgreementLineDraft, type AgreementLineWriter, type SyncedLine, type WrittenLine,
} from '../agreement-write-types';
import { VendorValidationError, type FieldMap } from '../vendor-errors';
import { writerCall, type WriterRequest } from '../writer-http';
import { VendorHttpError } from '../vendor-http';
import { commonLineProblems, endProblems, lineIdProblems, rewriteProblems, type LineVendor } from '../agreement-line-rules';
import { defined, hasMarker, isNumericId, markerLine, markerSearchText, quoted, resolvedAtCommit, vendorId } from '../write-support';
import type { FieldProblem, VendorRequestPreview, WriteContext } from '../write-types';
import { AUTOTASK_PAGE_SIZE, autotaskDialect, type FilterItem, type Native } from './client';

type Body = Record<string, unknown>;

/** ContractServices.internalDescription and invoiceDescription hold 1000 characters (Autotask field information). */
const DESCRIPTION_MAX = 1000;

const LINE_FIELDS: FieldMap = {
  contractid: 'agreement_source_id', contract: 'agreement_source_id', serviceid: 'product_source_id', service: 'product_source_id',
  contractserviceid: 'line_source_id', unitchange: 'quantity', units: 'quantity', adjustedprice: 'unit_price', unitprice: 'unit_price',
  adjustedunitprice: 'unit_price', adjustedunitcost: 'unit_cost', unitcost: 'unit_cost', effectivedate: 'effective_date',
  invoicedescription: 'description', internaldescription: 'idempotency_key',
};

// ---- Bodies ----

function contractServiceBody(d: AgreementLineDraft): Body {
  return defined({
    contractID: vendorId(d.agreementSourceId),
    serviceID: vendorId(d.productSourceId),
    // The service's list price; the contract's own price for it is adjustedPrice.
    unitPrice: d.product?.unitPrice ?? undefined,
    adjustedPrice: d.unitPrice ?? undefined,
    invoiceDescription: d.description ?? undefined,
    internalDescription: markerLine(d.marker),
  });
}

function adjustmentBody(contractServiceId: number | string, effectiveDate: string, unitChange: number | string, unitCost?: number | null): Body {
  return defined({
    contractServiceID: contractServiceId,
    effectiveDate: `${effectiveDate}T00:00:00Z`,
    unitChange,
    adjustedUnitCost: unitCost ?? undefined,
  });
}

/** Where a contract's services are created and updated (swagger: ContractServicesChild). */
const servicesPath = (agreementSourceId: string) => `/Contracts/${agreementSourceId}/Services`;

const CREATED_SERVICE = resolvedAtCommit('the id of the contract service the request above creates');
const unitDelta = (target: number, current: SyncedLine | null): number | string =>
  current?.quantity != null ? target - current.quantity : resolvedAtCommit(`${target} minus the contract service's current units`);

// ---- HTTP ----

/** One Autotask call (writer-http.ts); a 500/400 with `{errors}` is a refusal (VendorValidationError), never retried. */
const send = writerCall(autotaskDialect);
const call = <T>(ctx: WriteContext, req: WriterRequest, fallback: string) => send<T>(ctx, req, LINE_FIELDS, fallback);

async function query(ctx: WriteContext, entity: string, filter: FilterItem[]): Promise<Native[]> {
  const body = await call<{ items?: Native[] }>(ctx, {
    method: 'POST', path: `/${entity}/query`, body: { filter, MaxRecords: AUTOTASK_PAGE_SIZE }, read: true,
  }, 'line_source_id');
  if (!body || !Array.isArray(body.items)) throw new Error(`autotask ${entity}/query: expected {items} in the answer`);
  return body.items;
}

/** GET <Entity>/{id} (swagger: each entity's GetEntityById); null when Autotask answers 404 (an unknown id). */
async function byId(ctx: WriteContext, entity: string, id: string, field: string): Promise<{ item: Native | null; body: unknown }> {
  try {
    const body = await call<{ item?: Native | null }>(ctx, { method: 'GET', path: `/${entity}/${id}` }, field);
    return { item: body?.item ?? null, body };
  } catch (err) {
    // Autotask answers an unknown id with 404 (@apigrate/autotask-restapi README; docs/vendors.md third pass).
    if (err instanceof VendorHttpError && err.status === 404) return { item: null, body: err.body };
    throw err;
  }
}

async function contractService(ctx: WriteContext, agreementSourceId: string, lineRef: string): Promise<Native> {
  const { item, body } = await byId(ctx, 'ContractServices', lineRef, 'line_source_id');
  if (!item || String(item.contractID) !== agreementSourceId) {
    throw new VendorValidationError('autotask', [{
      field: 'line_source_id', message: `Contract service ${lineRef} is not a line of contract ${agreementSourceId} in Autotask.`,
    }], 200, body);
  }
  return item;
}

const dayMs = (v: unknown) => Date.parse(`${String(v).slice(0, 10)}T00:00:00Z`);

/** Units of the billing period containing `day` (else the first later one); 0 when the service has none. */
async function unitsOn(ctx: WriteContext, contractServiceId: string, day: string): Promise<number> {
  const rows = await query(ctx, 'ContractServiceUnits', [{ op: 'eq', field: 'contractServiceID', value: Number(contractServiceId) }]);
  const at = dayMs(day);
  const row = rows.filter((r) => dayMs(r.endDate) >= at).sort((a, b) => dayMs(a.startDate) - dayMs(b.startDate))[0];
  return typeof row?.units === 'number' ? row.units : 0;
}

/** Sets the units from `day` to `target` with one adjustment of the difference (none when already there). */
async function setUnits(ctx: WriteContext, lineRef: string, day: string, target: number, unitCost?: number | null): Promise<void> {
  const change = target - (await unitsOn(ctx, lineRef, day));
  if (change === 0 && unitCost == null) return;
  await call<{ itemId: number }>(ctx, {
    method: 'POST', path: '/ContractServiceAdjustments', body: adjustmentBody(vendorId(lineRef), day, change, unitCost),
  }, 'quantity');
}

function written(item: Native): WrittenLine {
  return { lineRef: String(item.id), native: item };
}

// ---- Rules ----

const VENDOR: LineVendor = { name: 'Autotask', anId: 'an Autotask id' };

/** ContractServiceAdjustments.unitChange is an integer: Autotask counts whole units. */
function wholeUnits(quantity: number | undefined): FieldProblem[] {
  return quantity !== undefined && Number.isFinite(quantity) && !Number.isInteger(quantity)
    ? [{ field: 'quantity', message: 'Autotask counts contract service units in whole numbers.' }]
    : [];
}

/** Contract.contractType of a Recurring Service contract, the only kind that takes services (ContractServices entity page). */
const RECURRING_SERVICE = 7;

/**
 * Why Autotask would refuse the add of a replace, read before its end is sent (Autotask has no
 * validate-only call): the contract open (active, Recurring Service, not ended) with the date inside
 * it, the service active, and not on the contract already. Empty when the add may go, or when it has
 * landed already (found by its marker: a retry finishes the replace).
 */
async function addRefusals(ctx: WriteContext, d: AgreementLineDraft, found: (marker: string) => Promise<WrittenLine | null>): Promise<FieldProblem[]> {
  if (await found(d.marker)) return [];
  const problems: FieldProblem[] = [];
  const { item: contract } = await byId(ctx, 'Contracts', d.agreementSourceId, 'agreement_source_id');
  if (!contract) problems.push({ field: 'agreement_source_id', message: `Contract ${d.agreementSourceId} is not in Autotask.` });
  else {
    if (Number(contract.contractType) !== RECURRING_SERVICE) {
      problems.push({ field: 'agreement_source_id', message: `Contract ${d.agreementSourceId} is not a Recurring Service contract; Autotask adds services only to those.` });
    }
    if (Number(contract.status) !== 1) problems.push({ field: 'agreement_source_id', message: `Contract ${d.agreementSourceId} is inactive in Autotask.` });
    const start = contract.startDate ? String(contract.startDate).slice(0, 10) : null;
    const end = contract.endDate ? String(contract.endDate).slice(0, 10) : null;
    if ((start && d.effectiveDate < start) || (end && d.effectiveDate > end)) {
      problems.push({ field: 'effective_date', message: `${d.effectiveDate} is outside contract ${d.agreementSourceId}'s dates (${start} to ${end}).` });
    }
    if (end && new Date(ctx.now?.() ?? Date.now()).toISOString().slice(0, 10) > end) {
      problems.push({ field: 'agreement_source_id', message: `Contract ${d.agreementSourceId} ended on ${end}; Autotask adds no service to it.` });
    }
  }
  const { item: service } = await byId(ctx, 'Services', d.productSourceId, 'product_source_id');
  if (!service) problems.push({ field: 'product_source_id', message: `Service ${quoted(d.productSourceId)} is not in Autotask.` });
  else if (service.isActive === false) problems.push({ field: 'product_source_id', message: `Service ${quoted(String(service.name ?? d.productSourceId))} is inactive in Autotask.` });
  if (contract && service) {
    const onContract = await query(ctx, 'ContractServices', [
      { op: 'eq', field: 'contractID', value: Number(d.agreementSourceId) },
      { op: 'eq', field: 'serviceID', value: Number(d.productSourceId) },
    ]);
    if (onContract.length) {
      problems.push({ field: 'product_source_id', message: `Service ${quoted(String(service.name ?? d.productSourceId))} is already on contract ${d.agreementSourceId} (line ${String(onContract[0].id)}); change its units with a rewrite.` });
    }
  }
  return problems;
}

// ---- The writer ----

export const autotaskAgreementWriter: AgreementLineWriter = {
  name: 'autotask',

  checkAdd(d) {
    const problems = [
      ...lineIdProblems(VENDOR, [['agreement_source_id', d.agreementSourceId], ['product_source_id', d.productSourceId]]),
      ...commonLineProblems(d, [['effective_date', d.effectiveDate]]),
      ...wholeUnits(d.quantity),
    ];
    if (!d.product) problems.push({ field: 'product_source_id', message: `Service ${quoted(d.productSourceId)} is not an Autotask service.` });
    else if (d.product.active === false) problems.push({ field: 'product_source_id', message: `Service ${quoted(d.product.name)} is inactive in Autotask.` });
    if (d.description && d.description.length > DESCRIPTION_MAX) {
      problems.push({ field: 'description', message: `Autotask allows at most ${DESCRIPTION_MAX} characters in an invoice description.` });
    }
    if (d.unitCost != null && d.quantity === 0) {
      problems.push({ field: 'unit_cost', message: 'Autotask sets a contract service\'s cost with its units; a line of 0 units takes the service\'s cost.' });
    }
    return problems;
  },

  checkRewrite(c) {
    const problems = [...rewriteProblems(VENDOR, c, { dated: true }), ...wholeUnits(c.quantity)];
    if (c.unitCost !== undefined) {
      problems.push({ field: 'unit_cost', message: 'Autotask takes a contract service\'s cost from the service; ContractServices.unitCost cannot be updated.' });
    }
    return problems;
  },

  checkEnd(e) {
    return endProblems(VENDOR, e);
  },

  previewAdd(d) {
    return [
      { method: 'POST', path: servicesPath(d.agreementSourceId), body: contractServiceBody(d) },
      ...(d.quantity > 0 || d.unitCost != null
        ? [{ method: 'POST' as const, path: '/ContractServiceAdjustments', body: adjustmentBody(CREATED_SERVICE, d.effectiveDate, d.quantity, d.unitCost) }]
        : []),
    ];
  },

  previewRewrite(c) {
    const out: VendorRequestPreview[] = [];
    if (c.unitPrice !== undefined) out.push({ method: 'PATCH', path: servicesPath(c.agreementSourceId), body: { id: vendorId(c.lineSourceId), adjustedPrice: c.unitPrice } });
    if (c.quantity !== undefined) {
      out.push({ method: 'POST', path: '/ContractServiceAdjustments', body: adjustmentBody(vendorId(c.lineSourceId), c.effectiveDate, unitDelta(c.quantity, c.current)) });
    }
    return out;
  },

  previewEnd(e) {
    return [{ method: 'POST', path: '/ContractServiceAdjustments', body: adjustmentBody(vendorId(e.lineSourceId), e.endDate, unitDelta(0, e.current)) }];
  },

  async addLine(ctx, d) {
    let line = await this.findLineByMarker(ctx, d.agreementSourceId, d.marker);
    if (!line) {
      const created = await call<{ itemId: number }>(ctx, { method: 'POST', path: servicesPath(d.agreementSourceId), body: contractServiceBody(d) }, 'product_source_id');
      line = { lineRef: String(created.itemId), native: {} };
    }
    await setUnits(ctx, line.lineRef, d.effectiveDate, d.quantity, d.unitCost);
    return written(await contractService(ctx, d.agreementSourceId, line.lineRef));
  },

  async rewriteLine(ctx, c) {
    await contractService(ctx, c.agreementSourceId, c.lineSourceId);
    if (c.unitPrice !== undefined) {
      await call(ctx, { method: 'PATCH', path: servicesPath(c.agreementSourceId), body: { id: vendorId(c.lineSourceId), adjustedPrice: c.unitPrice } }, 'unit_price');
    }
    if (c.quantity !== undefined) await setUnits(ctx, c.lineSourceId, c.effectiveDate, c.quantity);
    return written(await contractService(ctx, c.agreementSourceId, c.lineSourceId));
  },

  async endLine(ctx, e) {
    await contractService(ctx, e.agreementSourceId, e.lineSourceId);
    if (e.replacedBy) {
      const problems = await addRefusals(ctx, e.replacedBy, (m) => this.findLineByMarker(ctx, e.agreementSourceId, m));
      if (problems.length) throw new VendorValidationError('autotask', problems, 0, null);
    }
    await setUnits(ctx, e.lineSourceId, e.endDate, 0);
    return written(await contractService(ctx, e.agreementSourceId, e.lineSourceId));
  },

  async findLineByMarker(ctx, agreementSourceId, marker) {
    if (!isNumericId(agreementSourceId)) return null;
    const rows = await query(ctx, 'ContractServices', [
      { op: 'eq', field: 'contractID', value: Number(agreementSourceId) },
      { op: 'contains', field: 'internalDescription', value: markerSearchText(marker) },
    ]);
    const found = rows.find((r) => hasMarker(r.internalDescription, marker));
    return found ? written(found) : null;
  },
};
