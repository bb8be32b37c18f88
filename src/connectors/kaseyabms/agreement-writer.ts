/**
 * Kaseya BMS agreement lines: a contract's recurring services. BMS API 2.0 documents one operation on
 * them, POST /v2/finance/contracts/recurringservices/{contractId}/services (an array of
 * RecurringServicePostInputDto: ServiceId, ServiceName, ServiceDescription, Units, UnitCost, UnitPrice,
 * EffectiveDate, SortOrder), so only `add` is registered (writes.ts): no operation changes or ends a
 * recurring service, and none reads a contract's recurring services back.
 *
 * Marker: a trailing `[ref:<marker>]` line in ServiceDescription. With no read of the lines it cannot be
 * found again, so the add has no reconcile: after an unknown outcome the write is reported unknown,
 * never sent twice.
 */
import { commonLineProblems, lineIdProblems, type LineVendor } from '../agreement-line-rules';
import type { AgreementLineDraft, AgreementLineWriter } from '../agreement-write-types';
import type { FieldMap } from '../vendor-errors';
import { vendorId, withMarker } from '../write-support';
import type { FieldProblem, VendorRequestPreview } from '../write-types';
import { bmsWrite, type BmsRecord } from './client';

const BMS: LineVendor = { name: 'Kaseya BMS', anId: 'a Kaseya BMS id' };
const LINE_FIELDS: FieldMap = {
  serviceid: 'product_source_id', service: 'product_source_id', units: 'quantity', unitprice: 'unit_price', unitcost: 'unit_cost',
  effectivedate: 'effective_date', contract: 'agreement_source_id',
};

/** The largest Units BMS binds (RecurringServicePostInputDto.Units: integer, int32). */
const INT32_MAX = 2_147_483_647;

const path = (d: AgreementLineDraft) => `/v2/finance/contracts/recurringservices/${d.agreementSourceId}/services`;

function lineBody(d: AgreementLineDraft): Record<string, unknown>[] {
  return [{
    ServiceId: vendorId(d.productSourceId),
    ServiceDescription: withMarker(d.description ?? d.product?.name ?? '', d.marker),
    Units: d.quantity,
    UnitCost: d.unitCost ?? d.product?.unitCost ?? 0,
    UnitPrice: d.unitPrice ?? d.product?.unitPrice,
    // `format: date-time` (RFC 3339) needs the zone; midnight UTC of the effective day.
    EffectiveDate: `${d.effectiveDate}T00:00:00Z`,
    SortOrder: 0,
  }];
}

const NOT_DOCUMENTED = (verb: string): FieldProblem[] => [{
  field: 'line_source_id', message: `Kaseya BMS API 2.0 documents no way to ${verb} a recurring service.`,
}];

export const kaseyaBmsAgreementWriter: AgreementLineWriter = {
  name: 'kaseyabms',

  checkAdd(d) {
    const problems = [
      ...lineIdProblems(BMS, [['agreement_source_id', d.agreementSourceId], ['product_source_id', d.productSourceId]]),
      ...commonLineProblems(d, [['effective_date', d.effectiveDate]]),
    ];
    if (!d.product) problems.push({ field: 'product_source_id', message: `Service ${d.productSourceId} is not in the Kaseya BMS service catalogue.` });
    // RecurringServicePostInputDto.Units is an int32.
    if (!Number.isInteger(d.quantity) || d.quantity < 1) problems.push({ field: 'quantity', message: 'Kaseya BMS counts recurring service units in whole numbers of at least 1.' });
    else if (d.quantity > INT32_MAX) problems.push({ field: 'quantity', message: `Kaseya BMS holds at most ${INT32_MAX} recurring service units (an int32).` });
    if (d.unitPrice == null && d.product?.unitPrice == null) {
      problems.push({ field: 'unit_price', message: 'Kaseya BMS\'s service lookup carries no price: give unit_price.' });
    }
    return problems;
  },
  checkRewrite: () => NOT_DOCUMENTED('change'),
  checkEnd: () => NOT_DOCUMENTED('end'),

  previewAdd(d): VendorRequestPreview[] {
    return [{ method: 'POST', path: path(d), body: lineBody(d) }];
  },
  previewRewrite: () => [],
  previewEnd: () => [],

  async addLine(ctx, d) {
    const line = await bmsWrite<BmsRecord>(ctx, { method: 'POST', path: path(d), body: lineBody(d) }, LINE_FIELDS, 'product_source_id');
    if (!line || !Number.isInteger(line.Id)) throw new Error('Kaseya BMS answered a recurring service add without the service');
    return { lineRef: String(line.Id), native: line };
  },
  rewriteLine: () => Promise.reject(new Error('Kaseya BMS documents no change of a recurring service')),
  endLine: () => Promise.reject(new Error('Kaseya BMS documents no end of a recurring service')),
  findLineByMarker: () => Promise.resolve(null),
};
