/**
 * The agreement-line rules every vendor applies (docs/architecture.md, Agreements and billing), written once:
 * numbers finite and not negative, dates real days, ids as the vendor writes them, a rewrite that changes
 * something, no end before the line starts. Each connector's agreement writer calls these and adds only
 * its own vendor's rules.
 */
import { isDay } from '../shared/dates';
import { isNumericId, quoted } from './write-support';
import type { AgreementLineChange, AgreementLineEnd } from './agreement-write-types';
import type { FieldProblem } from './write-types';

/** The vendor as a line rule's message names it: `name` ("Autotask") and its id ("an Autotask id"). */
export interface LineVendor {
  name: string;
  anId: string;
}

/** Problems shared by every vendor: numbers finite and not negative, dates real days. */
export function commonLineProblems(
  values: { quantity?: number | null; unitPrice?: number | null; unitCost?: number | null },
  dates: [string, string | null | undefined][],
): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const fields: [string, number | null | undefined][] = [
    ['quantity', values.quantity], ['unit_price', values.unitPrice], ['unit_cost', values.unitCost],
  ];
  for (const [field, v] of fields) {
    if (v == null) continue;
    if (!Number.isFinite(v)) problems.push({ field, message: `${field} must be a finite number.` });
    else if (v < 0) problems.push({ field, message: `${field} cannot be negative.` });
  }
  for (const [field, v] of dates) {
    if (v != null && !isDay(v)) problems.push({ field, message: `${field} must be a date written YYYY-MM-DD.` });
  }
  return problems;
}

/** Every vendor refuses to end a line before the day it starts. */
export function endBeforeStart(vendor: string, endDate: string, start: string | null | undefined): FieldProblem[] {
  return isDay(endDate) && start && endDate < start
    ? [{ field: 'effective_date', message: `${vendor} cannot end a line on ${endDate}, before it starts (${start}).` }]
    : [];
}

/** Ids the vendor numbers (all three PSAs do): anything else is refused before a call. */
export function lineIdProblems(vendor: LineVendor, ids: [string, string][]): FieldProblem[] {
  return ids.filter(([, id]) => !isNumericId(id)).map(([field, id]) => ({ field, message: `${quoted(id)} is not ${vendor.anId}.` }));
}

/**
 * A rewrite: ids, numbers, something to change, and its date where the vendor dates a change (`dated`:
 * Autotask's adjustments; ConnectWise and HaloPSA change the line as a whole).
 */
export function rewriteProblems(vendor: LineVendor, c: AgreementLineChange, opts: { dated: boolean }): FieldProblem[] {
  const problems = [
    ...lineIdProblems(vendor, [['agreement_source_id', c.agreementSourceId], ['line_source_id', c.lineSourceId]]),
    ...commonLineProblems(c, opts.dated ? [['effective_date', c.effectiveDate]] : []),
  ];
  if (c.quantity === undefined && c.unitPrice === undefined && c.unitCost === undefined) {
    problems.push({ field: 'quantity', message: 'A rewrite changes the quantity, the unit price or the unit cost; none was given.' });
  }
  return problems;
}

/** An end: ids, a real day, not before the line starts. */
export function endProblems(vendor: LineVendor, e: AgreementLineEnd): FieldProblem[] {
  return [
    ...lineIdProblems(vendor, [['agreement_source_id', e.agreementSourceId], ['line_source_id', e.lineSourceId]]),
    ...commonLineProblems({}, [['effective_date', e.endDate]]),
    ...endBeforeStart(vendor.name, e.endDate, e.current?.effectiveStart),
  ];
}
