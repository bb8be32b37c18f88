/**
 * The value rules of docs/architecture.md, Agreements and billing, in one place: periods are real calendar days with the end
 * not before the start, amounts are finite and not negative, currencies are ISO 4217, and an extended
 * amount is its unit amount times the billable quantity within 0.01. Every problem is reported at
 * once (422 `validation`, `details.problems`).
 */
import { ServiceError } from '../errors/service-error';
import { isDay } from '../shared/dates';

export interface Problem {
  field: string;
  message: string;
}

/** Rounding slack on top of the documented 0.01, so that 0.1 x 3 = 0.30 passes. */
const CENT = 0.01 + 1e-9;

// Node 20 ships the ISO 4217 list with its ICU data; no table of our own to keep.
const CURRENCIES: ReadonlySet<string> = new Set(Intl.supportedValuesOf('currency'));

export function checkDay(problems: Problem[], field: string, value: string): void {
  if (!isDay(value)) problems.push({ field, message: 'must be a calendar day, YYYY-MM-DD (e.g. 2026-11-01)' });
}

export function checkPeriod(problems: Problem[], start: string, end: string): void {
  checkDay(problems, 'period_start', start);
  checkDay(problems, 'period_end', end);
  if (isDay(start) && isDay(end) && end < start) problems.push({ field: 'period_end', message: `must not be before period_start (${start})` });
}

export function checkAmount(problems: Problem[], field: string, value: number | null | undefined): void {
  if (value == null) return;
  if (!Number.isFinite(value)) problems.push({ field, message: 'must be a finite number' });
  else if (value < 0) problems.push({ field, message: 'must not be negative' });
}

/** The currency in its ISO 4217 form (upper case), or a problem. */
export function checkCurrency(problems: Problem[], value: string): string {
  const code = value.trim().toUpperCase();
  if (!/^[A-Z]{3}$/.test(code) || !CURRENCIES.has(code)) problems.push({ field: 'currency', message: 'must be an ISO 4217 currency code, e.g. USD or EUR' });
  return code;
}

/** `extended` = `unit` x `quantity` within 0.01, when all three are given and finite. */
export function checkExtended(problems: Problem[], field: string, extended: number | null | undefined, unit: number | null | undefined, unitField: string, quantity: number): void {
  if (extended == null || unit == null || !Number.isFinite(extended) || !Number.isFinite(unit) || !Number.isFinite(quantity)) return;
  const expected = unit * quantity;
  if (!Number.isFinite(expected) || Math.abs(expected - extended) > CENT) {
    problems.push({ field, message: `must be ${unitField} x billable_quantity (${roundMoney(expected)}) within 0.01; got ${extended}` });
  }
}

export function throwProblems(problems: Problem[]): void {
  if (!problems.length) return;
  throw new ServiceError('validation', problems.map((p) => `${p.field}: ${p.message}`).join('; '), {
    details: { field: problems[0].field, problems },
  });
}

/** Money as it is shown: cents, and never -0. */
export function roundMoney(value: number): number {
  const r = Math.round(value * 100) / 100;
  return r === 0 ? 0 : r;
}

/** Calendar months a period touches (2026-10-01..2026-11-30: 2). */
export function monthsOf(start: string, end: string): number {
  const [ys, ms] = start.split('-').map(Number);
  const [ye, me] = end.split('-').map(Number);
  return Math.max(1, (ye * 12 + me) - (ys * 12 + ms) + 1);
}

/**
 * Orders vendor ids the way people read them ("9" before "10") and names alphabetically. Collators
 * made once: `localeCompare` with options builds one per call (149 ms over a reconciliation's 11,200
 * rows, measured, against 6 ms with one collator).
 */
export const compareVendorIds = new Intl.Collator('en', { numeric: true }).compare;
export const compareNames = new Intl.Collator('en').compare;
