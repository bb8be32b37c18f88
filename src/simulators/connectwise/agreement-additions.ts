/**
 * Agreement additions as ConnectWise writes them: POST /finance/agreements/{id}/additions and JSON Patch
 * of one addition. Fields are ConnectWise's Addition model (product, quantity, lessIncluded, unitPrice,
 * unitCost, billCustomer, effectiveDate, cancelledDate, taxableFlag, invoiceDescription, description,
 * agreementId, extPrice, extCost, margin, agreementStatus Active|Cancelled|Expired|Inactive; ConnectWise's
 * OpenAPI as generated into HealthITAU/pyconnectwise models/manage `Addition` (billCustomer required,
 * Billable|DoNotBill|NoCharge) and sowderca/connectwise-ruby-sdk docs/Addition.md; docs/vendors.md has
 * `product` required too). Refusals are ConnectWise's 400 `{code: "InvalidObject", message, errors: [{code, message,
 * resource, field}]}`; an unknown agreement or addition is 404 NotFound.
 *
 * Rules enforced (our reading where ConnectWise documents none, noted as such):
 * - product (a catalogue reference by id or identifier) and billCustomer (Billable, DoNotBill,
 *   NoCharge) are required; the product must exist in /procurement/catalog and not be inactive;
 * - quantity, unitPrice, unitCost are numbers; effectiveDate and cancelledDate are dates, and
 *   cancelledDate is not before effectiveDate;
 * - only an Active agreement takes a new addition or a change to one (Cancelled, Expired and Inactive
 *   agreements are closed for billing changes in the UI; unconfirmed for the API, so refused here);
 * - PATCH changes the writable fields only; id, agreementId, product and the computed amounts are not.
 */
import { badRequest, FieldErrors, notFound } from './errors';
import { resolveRef } from './references';
import { clone, type CwRecord, type Instance } from './store';
import { newInfo, touch, type Change } from './tickets';

const RESOURCE = 'addition';
const BILL_CUSTOMER = ['Billable', 'DoNotBill', 'NoCharge'];
/** invoiceDescription 6000 and serialNumber 50 as the OpenAPI-generated models give them; description has no published limit (ours). */
const TEXT_MAX: Record<string, number> = { description: 1000, invoiceDescription: 6000, serialNumber: 50 };
/** Fields a JSON Patch may change, with their JSON type. */
const PATCHABLE: Record<string, 'number' | 'string' | 'boolean' | 'date'> = {
  quantity: 'number', lessIncluded: 'number', unitPrice: 'number', unitCost: 'number', billCustomer: 'string',
  effectiveDate: 'date', cancelledDate: 'date', taxableFlag: 'boolean', invoiceDescription: 'string', description: 'string',
  serialNumber: 'string',
};
const CLOSED_STATUSES = ['Cancelled', 'Expired', 'Inactive'];

/** `2026-01-01`, `2026-01-01T00:00:00Z` -> the ConnectWise timestamp (midnight UTC for a date); null when not a date. */
function cwDateValue(v: unknown): string | null {
  if (typeof v !== 'string') return null;
  const s = /^\d{4}-\d{2}-\d{2}$/.test(v) ? `${v}T00:00:00Z` : v;
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/.test(s)) return null;
  const t = Date.parse(s);
  if (Number.isNaN(t)) return null;
  // A date that rolls over (2026-02-30) is not a date.
  if (new Date(t).toISOString().slice(0, 10) !== s.slice(0, 10) && /Z$/.test(s)) return null;
  return new Date(t).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function agreementOf(inst: Instance, agreementId: number): CwRecord {
  const agreement = inst.table('agreements').get(agreementId);
  if (!agreement) throw notFound('Agreement', agreementId);
  return agreement;
}

function checkAgreementOpen(agreement: CwRecord, errors: FieldErrors): void {
  if (CLOSED_STATUSES.includes(agreement.agreementStatus) || agreement.cancelledFlag === true) {
    errors.invalid('agreementId', `Agreement ${agreement.id} is ${String(agreement.agreementStatus).toLowerCase()}; additions cannot be added or changed.`);
  }
}

function productRef(p: CwRecord): CwRecord {
  return {
    id: p.id, identifier: p.identifier, description: p.description,
    _info: { product_href: `/v4_6_release/apis/3.0/procurement/catalog/${p.id}` },
  };
}

const round2 = (n: number) => Math.round(n * 100) / 100;

/** extPrice, extCost and margin, as ConnectWise computes them from quantity less the included units. */
function computeAmounts(a: CwRecord): void {
  const billed = (a.quantity ?? 0) - (a.lessIncluded ?? 0);
  a.extPrice = round2(billed * (a.unitPrice ?? 0));
  a.extCost = round2(billed * (a.unitCost ?? 0));
  a.margin = round2(a.extPrice - a.extCost);
}

function checkNumber(errors: FieldErrors, field: string, v: unknown): void {
  if (v !== undefined && v !== null && (typeof v !== 'number' || !Number.isFinite(v))) errors.invalid(field, `${field} must be a number.`);
}

function checkText(errors: FieldErrors, field: string, v: unknown): void {
  if (v === undefined || v === null) return;
  if (typeof v !== 'string') errors.invalid(field, `${field} must be a string.`);
  else if (v.length > (TEXT_MAX[field] ?? 1000)) errors.invalid(field, `${field} cannot be longer than ${TEXT_MAX[field] ?? 1000} characters.`);
}

function checkDates(errors: FieldErrors, effective: string | null, cancelled: string | null): void {
  if (effective && cancelled && Date.parse(cancelled) < Date.parse(effective)) {
    errors.invalid('cancelledDate', 'The cancelled date cannot be before the effective date.');
  }
}

export function createAddition(inst: Instance, agreementId: number, body: unknown, change: Change): CwRecord {
  const agreement = agreementOf(inst, agreementId);
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest('The request body must be an addition object.');
  const b = body as CwRecord;
  const errors = new FieldErrors(RESOURCE);
  checkAgreementOpen(agreement, errors);

  let product: CwRecord | undefined;
  if (b.product == null) errors.required('product');
  else {
    product = resolveRef(inst, 'catalog', b.product);
    if (!product) errors.invalid('product', `Product ${JSON.stringify(b.product)} was not found in the product catalog.`);
    else if (product.inactiveFlag === true) errors.invalid('product', `Product ${product.identifier} is inactive.`);
  }
  if (b.billCustomer == null || b.billCustomer === '') errors.required('billCustomer');
  else if (!BILL_CUSTOMER.includes(b.billCustomer)) errors.invalid('billCustomer', `billCustomer must be one of ${BILL_CUSTOMER.join(', ')}.`);
  for (const f of ['quantity', 'lessIncluded', 'unitPrice', 'unitCost']) checkNumber(errors, f, b[f]);
  for (const f of ['description', 'invoiceDescription', 'serialNumber']) checkText(errors, f, b[f]);
  const effective = b.effectiveDate == null ? null : cwDateValue(b.effectiveDate);
  if (b.effectiveDate != null && !effective) errors.invalid('effectiveDate', 'effectiveDate is not a valid date.');
  const cancelled = b.cancelledDate == null ? null : cwDateValue(b.cancelledDate);
  if (b.cancelledDate != null && !cancelled) errors.invalid('cancelledDate', 'cancelledDate is not a valid date.');
  const effectiveOrToday = effective ?? `${change.at.toISOString().slice(0, 10)}T00:00:00Z`;
  checkDates(errors, effectiveOrToday, cancelled);
  errors.throwIfAny();

  const p = product!;
  const addition: CwRecord = {
    id: inst.nextId('additions'),
    product: productRef(p),
    quantity: b.quantity ?? 1,
    lessIncluded: b.lessIncluded ?? 0,
    unitPrice: b.unitPrice ?? p.price ?? 0,
    unitCost: b.unitCost ?? p.cost ?? 0,
    billCustomer: b.billCustomer,
    effectiveDate: effectiveOrToday,
    ...(cancelled ? { cancelledDate: cancelled } : {}),
    taxableFlag: b.taxableFlag ?? p.taxableFlag ?? false,
    ...(b.serialNumber ? { serialNumber: b.serialNumber } : {}),
    ...(b.invoiceDescription ? { invoiceDescription: b.invoiceDescription } : {}),
    description: b.description ?? p.description,
    purchaseItemFlag: false,
    specialOrderFlag: false,
    agreementId: agreement.id,
    prorateCost: 0,
    prorateCurrentPeriodFlag: true,
    agreementStatus: agreement.agreementStatus,
    invoiceGrouping: { id: 1, name: 'Default' },
    _info: newInfo(change),
  };
  computeAmounts(addition);
  inst.insert('additions', addition);
  return clone(addition);
}

interface PatchOp {
  op: string;
  path: string;
  value?: unknown;
}

export function patchAddition(inst: Instance, agreementId: number, id: number, ops: unknown, change: Change): CwRecord {
  const agreement = agreementOf(inst, agreementId);
  const addition = inst.table('additions').get(id);
  if (!addition || addition.agreementId !== agreementId) throw notFound('Addition', id);
  if (!Array.isArray(ops)) throw badRequest('The request body must be a JSON Patch array of operations.');
  const errors = new FieldErrors(RESOURCE);
  checkAgreementOpen(agreement, errors);
  const draft: CwRecord = { ...addition };
  for (const raw of ops) {
    const op = raw as PatchOp;
    if (!op || typeof op.path !== 'string' || typeof op.op !== 'string') throw badRequest('Each patch operation needs op and path');
    const kind = op.op.toLowerCase();
    if (!['replace', 'add', 'remove'].includes(kind)) throw badRequest(`Unsupported patch operation '${op.op}'`);
    const field = op.path.replace(/^\//, '');
    const type = PATCHABLE[field];
    if (!type) { errors.invalid(field || op.path, `Path '${op.path}' cannot be updated.`); continue; }
    if (kind === 'remove' || op.value === null) {
      if (field === 'cancelledDate' || field === 'invoiceDescription' || field === 'serialNumber') delete draft[field];
      else errors.required(field);
      continue;
    }
    if (type === 'date') {
      const d = cwDateValue(op.value);
      if (!d) { errors.invalid(field, `${field} is not a valid date.`); continue; }
      draft[field] = d;
      continue;
    }
    if (type === 'number') { checkNumber(errors, field, op.value); if (typeof op.value === 'number') draft[field] = op.value; continue; }
    if (typeof op.value !== type) { errors.invalid(field, `${field} must be a ${type}.`); continue; }
    if (field === 'billCustomer' && !BILL_CUSTOMER.includes(op.value as string)) {
      errors.invalid(field, `billCustomer must be one of ${BILL_CUSTOMER.join(', ')}.`);
      continue;
    }
    if (type === 'string') checkText(errors, field, op.value);
    draft[field] = op.value;
  }
  checkDates(errors, draft.effectiveDate ?? null, draft.cancelledDate ?? null);
  errors.throwIfAny();
  for (const k of Object.keys(addition)) if (!(k in draft)) delete addition[k];
  Object.assign(addition, draft);
  computeAmounts(addition);
  touch(addition, change);
  return clone(addition);
}
