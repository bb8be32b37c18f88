/**
 * The one reader of the dates a client sends (docs/architecture.md, Reads): RFC 3339 instants
 * (`updated_since`, the ask's `opened_since`, a cursor's time) and calendar days (`period_start`,
 * `period_end`, `effective_date`). Both are real calendar values (2026-02-30 is refused, not rolled over)
 * within years 0001 to 9999 in UTC: what every vendor, JavaScript's Date and PostgreSQL's timestamptz all
 * hold, so a date far outside any vendor's range is a 422 naming its field, never a database error.
 */
import { text, z } from './request';

const INSTANT = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-](\d{2}):(\d{2}))$/;
const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
/** A day or instant written with a year of more (or fewer) than four digits, or a sign: out of range, not malformed. */
const ODD_YEAR = /^[+-]?\d{5,}-|^[+-]\d{4}-|^0000-/;

/** The first and last instants the service takes, in ms since the epoch. */
export const EARLIEST = Date.parse('0001-01-01T00:00:00Z');
export const LATEST = Date.parse('9999-12-31T23:59:59.999Z');

export const RANGE_MESSAGE = 'is out of range: dates from 0001-01-01 to 9999-12-31 (UTC)';

/** Days in a month of a year (1-9999; Date.UTC alone maps years 0-99 to 1900-1999). */
function daysIn(year: number, month: number): number {
  const d = new Date(0);
  d.setUTCFullYear(year, month, 0);
  return d.getUTCDate();
}

function realDate(y: number, mo: number, d: number): boolean {
  return y >= 1 && mo >= 1 && mo <= 12 && d >= 1 && d <= daysIn(y, mo);
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; problem: 'format' | 'range' };

/** An RFC 3339 instant: its time in ms, or why not (`range`: a real time outside 0001-9999 UTC). */
export function parseInstant(s: string): Parsed<number> {
  const m = INSTANT.exec(s);
  if (!m) return { ok: false, problem: ODD_YEAR.test(s) ? 'range' : 'format' };
  const [y, mo, d, h, mi, se] = m.slice(1, 7).map(Number);
  if (y === 0 && realDate(4, mo, d)) return { ok: false, problem: 'range' };
  if (!realDate(y, mo, d) || h > 23 || mi > 59 || se > 59) return { ok: false, problem: 'format' };
  if (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)) return { ok: false, problem: 'format' };
  const at = Date.parse(s);
  if (Number.isNaN(at)) return { ok: false, problem: 'format' };
  return at < EARLIEST || at > LATEST ? { ok: false, problem: 'range' } : { ok: true, value: at };
}

/** A calendar day `YYYY-MM-DD`: the day itself, or why not (`range`: year 0 or more than four digits). */
export function parseDay(s: string): Parsed<string> {
  const m = DAY.exec(s);
  if (!m) return { ok: false, problem: ODD_YEAR.test(s) ? 'range' : 'format' };
  const [y, mo, d] = m.slice(1, 4).map(Number);
  if (y === 0) return { ok: false, problem: realDate(4, mo, d) ? 'range' : 'format' };
  return realDate(y, mo, d) ? { ok: true, value: s } : { ok: false, problem: 'format' };
}

export function isDay(s: string | null | undefined): s is string {
  return typeof s === 'string' && parseDay(s).ok;
}

/** A request's RFC 3339 instant (422 HTTPValidationError naming the field: malformed or out of range). */
export const rfc3339 = z.string().max(40).superRefine((s, ctx) => {
  const r = parseInstant(s);
  if (!r.ok) ctx.addIssue({ code: 'custom', message: r.problem === 'range' ? RANGE_MESSAGE : 'must be an RFC 3339 timestamp, e.g. 2026-11-22T10:00:00Z' });
});

/**
 * A request's calendar day. Only a day out of range is refused here (422 HTTPValidationError naming the
 * field); whether the text is a real day at all is the rule of the service that reads it (billing and
 * agreement lines answer 422 `validation` listing every problem), with `isDay` from this module.
 */
export function dayField(max = 40) {
  return text(max).superRefine((s, ctx) => {
    const r = parseDay(s);
    if (!r.ok && r.problem === 'range') ctx.addIssue({ code: 'custom', message: RANGE_MESSAGE });
  });
}

/** A time as the API writes it: RFC 3339 in UTC, without milliseconds when they are zero; null stays null. */
export function toRfc3339(d: Date | string | null | undefined): string | null {
  return d == null ? null : (d instanceof Date ? d : new Date(d)).toISOString().replace('.000Z', 'Z');
}
