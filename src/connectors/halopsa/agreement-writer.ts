/**
 * HaloPSA agreement lines (the limited connector, interface document rule 14): a Halo contract's priced
 * lines are the lines of the recurring invoice linked to it (`contract_id`), written with
 * `POST /api/RecurringInvoice/Lines` (an InvoiceDetail array: an element without `id` adds a line to the
 * invoice `ihid`, one with `id` updates that line; Halo swagger, covenanttechnologysolutions/halopsa-rest
 * generator/spec/swagger.json).
 *
 * Preview works everywhere. Whether a commit may run is the caller's decision: the service commits on
 * the fixture host (the sandbox simulator) only and answers 501 `not_supported` elsewhere; this writer
 * only sends what it is asked to.
 *
 * - add: the contract's recurring invoice is looked up first (GET /api/RecurringInvoice?contract_id=),
 *   then one line with the item (`_itemid`, and `item_code`, the item's code the lines carry), qty_order,
 *   unit_price, unit_cost, startdate;
 * - rewrite: the line by id with qty_order / unit_price / unit_cost (absolute values);
 * - end: the line by id with `enddate`;
 * - marker: `comment_1`, a free-text field of InvoiceDetail (our choice; whether Halo prints it on the
 *   invoice is unconfirmed), found again by reading the contract's invoice lines.
 */
import {
  type AgreementLineChange, type AgreementLineDraft, type AgreementLineEnd,
  type AgreementLineWriter, type WrittenLine,
} from '../agreement-write-types';
import { VendorValidationError, type FieldMap } from '../vendor-errors';
import { writerCall, type WriterRequest } from '../writer-http';
import { commonLineProblems, endProblems, lineIdProblems, rewriteProblems, type LineVendor } from '../agreement-line-rules';
import { defined, hasMarker, isNumericId, markerLine, quoted, resolvedAtCommit, vendorId } from '../write-support';
import type { WriteContext } from '../write-types';
import { haloDialect, type HaloRecord } from './client';

type Body = Record<string, unknown>;

const LINE_FIELDS: FieldMap = {
  ihid: 'agreement_source_id', contract: 'agreement_source_id', contract_id: 'agreement_source_id', item: 'product_source_id',
  _itemid: 'product_source_id', item_code: 'product_source_id', qty_order: 'quantity', unit_price: 'unit_price',
  unit_cost: 'unit_cost', startdate: 'effective_date', enddate: 'effective_date', 'end date': 'effective_date', line: 'line_source_id',
};

const LINES_PATH = '/api/RecurringInvoice/Lines';
const haloDay = (day: string) => `${day}T00:00:00`;

function addBody(d: AgreementLineDraft, invoiceId: number | string): Body[] {
  return [defined({
    ihid: invoiceId,
    contract_id: vendorId(d.agreementSourceId),
    _itemid: isNumericId(d.productSourceId) ? vendorId(d.productSourceId) : undefined,
    item_code: d.product?.sku ?? (isNumericId(d.productSourceId) ? undefined : d.productSourceId),
    item_shortdescription: d.description ?? d.product?.name ?? undefined,
    qty_order: d.quantity,
    unit_price: d.unitPrice ?? undefined,
    unit_cost: d.unitCost ?? undefined,
    startdate: haloDay(d.effectiveDate),
    comment_1: markerLine(d.marker),
  })];
}

function rewriteBody(c: AgreementLineChange): Body[] {
  return [defined({ id: vendorId(c.lineSourceId), qty_order: c.quantity, unit_price: c.unitPrice, unit_cost: c.unitCost })];
}

function endBody(e: AgreementLineEnd): Body[] {
  return [{ id: vendorId(e.lineSourceId), enddate: haloDay(e.endDate) }];
}

// ---- HTTP ----

/** One Halo call (writer-http.ts); a 400, or a 404 for an unknown contract or line, is a refusal. */
const haloCall = writerCall(haloDialect, [400, 404]);
const call = <T>(ctx: WriteContext, req: WriterRequest, fallback: string) => haloCall<T>(ctx, req, LINE_FIELDS, fallback);

/** The recurring invoices of a contract, with their lines. */
async function invoicesOf(ctx: WriteContext, agreementSourceId: string): Promise<HaloRecord[]> {
  const body = await call<{ invoices?: HaloRecord[] }>(ctx, {
    method: 'GET', path: '/api/RecurringInvoice', query: { contract_id: agreementSourceId, includelines: true },
  }, 'agreement_source_id');
  return Array.isArray(body?.invoices) ? body.invoices : [];
}

async function invoiceOf(ctx: WriteContext, agreementSourceId: string): Promise<HaloRecord> {
  const invoice = (await invoicesOf(ctx, agreementSourceId)).find((i) => i.disabled !== true);
  if (!invoice) {
    throw new VendorValidationError('halopsa', [{
      field: 'agreement_source_id', message: `HaloPSA contract ${agreementSourceId} has no recurring invoice to carry its lines.`,
    }], 200, null);
  }
  return invoice;
}

async function send(ctx: WriteContext, body: Body[], fallback: string): Promise<WrittenLine> {
  const answer = await call<HaloRecord | HaloRecord[]>(ctx, { method: 'POST', path: LINES_PATH, body }, fallback);
  const line = Array.isArray(answer) ? answer[0] : answer;
  return { lineRef: String(line.id), native: line };
}

// ---- Rules ----

const VENDOR: LineVendor = { name: 'HaloPSA', anId: 'a HaloPSA id' };

// ---- The writer ----

export const haloPsaAgreementWriter: AgreementLineWriter = {
  name: 'halopsa',

  checkAdd(d) {
    const problems = [
      ...lineIdProblems(VENDOR, [['agreement_source_id', d.agreementSourceId]]),
      ...commonLineProblems(d, [['effective_date', d.effectiveDate]]),
    ];
    if (!d.product) problems.push({ field: 'product_source_id', message: `Item ${quoted(d.productSourceId)} is not a HaloPSA item.` });
    else if (d.product.active === false) problems.push({ field: 'product_source_id', message: `Item ${quoted(d.product.name)} is inactive in HaloPSA.` });
    return problems;
  },

  checkRewrite(c) {
    return rewriteProblems(VENDOR, c, { dated: false });
  },

  checkEnd(e) {
    return endProblems(VENDOR, e);
  },

  previewAdd(d) {
    return [
      { method: 'GET', path: `/api/RecurringInvoice?contract_id=${d.agreementSourceId}&includelines=true` },
      { method: 'POST', path: LINES_PATH, body: addBody(d, resolvedAtCommit(`the recurring invoice of contract ${d.agreementSourceId}`)) },
    ];
  },

  previewRewrite(c) {
    return [{ method: 'POST', path: LINES_PATH, body: rewriteBody(c) }];
  },

  previewEnd(e) {
    return [{ method: 'POST', path: LINES_PATH, body: endBody(e) }];
  },

  async addLine(ctx, d) {
    const invoice = await invoiceOf(ctx, d.agreementSourceId);
    return send(ctx, addBody(d, invoice.id), 'product_source_id');
  },

  async rewriteLine(ctx, c) {
    await lineOf(ctx, c.agreementSourceId, c.lineSourceId);
    return send(ctx, rewriteBody(c), 'line_source_id');
  },

  async endLine(ctx, e) {
    await lineOf(ctx, e.agreementSourceId, e.lineSourceId);
    return send(ctx, endBody(e), 'effective_date');
  },

  async findLineByMarker(ctx, agreementSourceId, marker) {
    for (const invoice of await invoicesOf(ctx, agreementSourceId)) {
      const line = (Array.isArray(invoice.lines) ? (invoice.lines as HaloRecord[]) : []).find((l) => hasMarker(l.comment_1, marker));
      if (line) return { lineRef: String(line.id), native: line };
    }
    return null;
  },
};

/** The line must be one of the contract's (Halo would update a line of any invoice by id). */
async function lineOf(ctx: WriteContext, agreementSourceId: string, lineRef: string): Promise<HaloRecord> {
  for (const invoice of await invoicesOf(ctx, agreementSourceId)) {
    const line = (Array.isArray(invoice.lines) ? (invoice.lines as HaloRecord[]) : []).find((l) => String(l.id) === lineRef);
    if (line) return line;
  }
  throw new VendorValidationError('halopsa', [{
    field: 'line_source_id', message: `Line ${lineRef} is not a line of HaloPSA contract ${agreementSourceId}.`,
  }], 200, null);
}
