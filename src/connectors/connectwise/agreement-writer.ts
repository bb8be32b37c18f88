/**
 * ConnectWise agreement lines: agreement additions (`/finance/agreements/{id}/additions`; docs/vendors.md,
 * docs/architecture.md, Agreements and billing). One body builder per verb serves both preview and commit.
 *
 * - add: POST an Addition with `product` (a catalogue reference, `{id}` of /procurement/catalog) and
 *   `billCustomer` (both required), `quantity`, `unitPrice`, `unitCost`, `effectiveDate`.
 * - rewrite: PATCH the addition with a JSON Patch of `/quantity`, `/unitPrice`, `/unitCost` (absolute
 *   values, so a repeat lands the same state).
 * - end: PATCH `/cancelledDate` (ConnectWise ends an addition by its cancelled date).
 * - marker: the Addition model has two free-text fields, `description` and `invoiceDescription` (max
 *   6000) (ConnectWise's OpenAPI as generated into HealthITAU/pyconnectwise models/manage `Addition` and
 *   sowderca/connectwise-ruby-sdk docs/Addition.md). `invoiceDescription` prints on the customer's
 *   invoice, so the marker goes at the end of `description` as ` [ref:<marker>]`, found again with
 *   `conditions=description contains "<marker>"` (the bare marker: markerSearchText).
 *
 * Writes are sent once (`retry: false`); lookups retry throttling as reads do.
 */
import {
  type AgreementLineChange, type AgreementLineDraft, type AgreementLineEnd,
  type AgreementLineWriter, type WrittenLine,
} from '../agreement-write-types';
import type { FieldMap } from '../vendor-errors';
import { writerCall, type WriterRequest } from '../writer-http';
import { commonLineProblems, endProblems, lineIdProblems, rewriteProblems, type LineVendor } from '../agreement-line-rules';
import { defined, hasMarker, markerLine, markerSearchText, quoted, vendorId } from '../write-support';
import type { WriteContext } from '../write-types';
import { cwDialect, CW_MAX_PAGE_SIZE, type CwNative } from './client';

type Body = Record<string, unknown>;

/** What ConnectWise bills for a line the service adds (the Addition's `billCustomer`). */
const BILL_CUSTOMER = 'Billable';
/** Our reading of the description's length (ConnectWise does not publish it): the simulator's limit. */
const DESCRIPTION_MAX = 1000;

const ADDITION_FIELDS: FieldMap = {
  product: 'product_source_id', billcustomer: 'product_source_id', quantity: 'quantity', unitprice: 'unit_price',
  unitcost: 'unit_cost', effectivedate: 'effective_date', cancelleddate: 'effective_date', description: 'idempotency_key',
  invoicedescription: 'description', agreementid: 'agreement_source_id', agreement: 'agreement_source_id',
};

const additionsPath = (agreementRef: string) => `/finance/agreements/${agreementRef}/additions`;
const additionPath = (agreementRef: string, lineRef: string) => `${additionsPath(agreementRef)}/${lineRef}`;
/** ConnectWise dates are midnight UTC timestamps. */
const cwDay = (day: string) => `${day}T00:00:00Z`;

// ---- Bodies ----

/** The addition's description: the product's name (or the caller's text) with our marker at the end. */
function markedDescription(d: AgreementLineDraft): string {
  const base = (d.product?.name ?? `Product ${d.productSourceId}`).trim();
  return `${base} ${markerLine(d.marker)}`;
}

function addBody(d: AgreementLineDraft): Body {
  return defined({
    product: { id: vendorId(d.productSourceId) },
    billCustomer: BILL_CUSTOMER,
    quantity: d.quantity,
    // Left out, ConnectWise takes the catalogue's price and cost.
    unitPrice: d.unitPrice ?? undefined,
    unitCost: d.unitCost ?? undefined,
    effectiveDate: cwDay(d.effectiveDate),
    description: markedDescription(d),
    invoiceDescription: d.description ?? undefined,
  });
}

function rewriteOps(c: AgreementLineChange): Body[] {
  const ops: Body[] = [];
  if (c.quantity !== undefined) ops.push({ op: 'replace', path: '/quantity', value: c.quantity });
  if (c.unitPrice !== undefined) ops.push({ op: 'replace', path: '/unitPrice', value: c.unitPrice });
  if (c.unitCost !== undefined) ops.push({ op: 'replace', path: '/unitCost', value: c.unitCost });
  return ops;
}

function endOps(e: AgreementLineEnd): Body[] {
  return [{ op: 'replace', path: '/cancelledDate', value: cwDay(e.endDate) }];
}

// ---- HTTP ----

/** One ConnectWise call (writer-http.ts); its 400 becomes a VendorValidationError naming our line fields. */
const send = writerCall(cwDialect);
const call = <T>(ctx: WriteContext, req: WriterRequest, fallback: string) => send<T>(ctx, req, ADDITION_FIELDS, fallback);

function written(rec: CwNative): WrittenLine {
  return { lineRef: String(rec.id), native: rec };
}

// ---- Rules ----

const VENDOR: LineVendor = { name: 'ConnectWise', anId: 'a ConnectWise id' };

// ---- The writer ----

export const connectwiseAgreementWriter: AgreementLineWriter = {
  name: 'connectwise',

  checkAdd(d) {
    const problems = [
      ...lineIdProblems(VENDOR, [['agreement_source_id', d.agreementSourceId], ['product_source_id', d.productSourceId]]),
      ...commonLineProblems(d, [['effective_date', d.effectiveDate]]),
    ];
    if (!d.product) {
      problems.push({ field: 'product_source_id', message: `Product ${quoted(d.productSourceId)} is not in the ConnectWise product catalog.` });
    } else if (d.product.active === false) {
      problems.push({ field: 'product_source_id', message: `Product ${quoted(d.product.sku ?? d.productSourceId)} is inactive in the ConnectWise product catalog.` });
    }
    if (markedDescription(d).length > DESCRIPTION_MAX) {
      problems.push({ field: 'idempotency_key', message: `The line description with the write marker is longer than the ${DESCRIPTION_MAX} characters ConnectWise keeps.` });
    }
    return problems;
  },

  checkRewrite(c) {
    return rewriteProblems(VENDOR, c, { dated: false });
  },

  checkEnd(e) {
    return endProblems(VENDOR, e);
  },

  previewAdd(d) {
    return [{ method: 'POST', path: additionsPath(d.agreementSourceId), body: addBody(d) }];
  },

  previewRewrite(c) {
    return [{ method: 'PATCH', path: additionPath(c.agreementSourceId, c.lineSourceId), body: rewriteOps(c) }];
  },

  previewEnd(e) {
    return [{ method: 'PATCH', path: additionPath(e.agreementSourceId, e.lineSourceId), body: endOps(e) }];
  },

  async addLine(ctx, d) {
    return written(await call<CwNative>(ctx, this.previewAdd(d)[0], 'product_source_id'));
  },

  async rewriteLine(ctx, c) {
    return written(await call<CwNative>(ctx, this.previewRewrite(c)[0], 'line_source_id'));
  },

  async endLine(ctx, e) {
    return written(await call<CwNative>(ctx, this.previewEnd(e)[0], 'effective_date'));
  },

  async findLineByMarker(ctx, agreementSourceId, marker) {
    // A marker holds neither quotes nor backslashes (markerSearchText), so it goes in the quotes as it is.
    const conditions = `description contains "${markerSearchText(marker)}"`;
    const rows = await call<unknown>(ctx, {
      method: 'GET', path: additionsPath(agreementSourceId), query: { conditions, pageSize: CW_MAX_PAGE_SIZE, page: 1, orderBy: 'id asc' },
    }, 'agreement_source_id');
    if (!Array.isArray(rows)) throw new Error(`connectwise ${additionsPath(agreementSourceId)}: expected a JSON array`);
    const found = (rows as CwNative[]).find((a) => hasMarker(a.description, marker));
    return found ? written(found) : null;
  },
};
