/**
 * Small pieces the three PSA writers share: the marker line kept in vendor text fields that have no
 * external-reference field of their own, the placeholder a preview shows for a value only the vendor
 * can supply at commit time, and the read-side context the existing list helpers take.
 */
import type { FieldProblem } from './write-types';

/** The line that carries our marker in a note or an internal-notes field: `[ref:<marker>]`. */
export function markerLine(marker: string): string {
  return `[ref:${marker}]`;
}

/** The text with the marker line appended (on its own line). */
export function withMarker(text: string, marker: string): string {
  const body = text.replace(/\s+$/, '');
  return body ? `${body}\n\n${markerLine(marker)}` : markerLine(marker);
}

/**
 * The text a vendor search (`contains`, `like`) looks for to find a marker: the bare marker, never the
 * `[ref:...]` line. ConnectWise and Autotask search text with SQL Server's LIKE, where `[` opens a
 * character class, and neither documents escaping it; a marker (`msp-` and hex) holds no LIKE wildcard.
 * What the search finds is confirmed with hasMarker.
 */
export function markerSearchText(marker: string): string {
  return marker;
}

/** True when `text` carries exactly this marker's line. */
export function hasMarker(text: unknown, marker: string): boolean {
  return typeof text === 'string' && text.includes(markerLine(marker));
}

/**
 * What a preview shows for a value the connector looks up at the vendor during the commit (a
 * project's phase, a resource's role): a readable description of where the value comes from.
 */
export function resolvedAtCommit(description: string): string {
  return `<resolved at commit: ${description}>`;
}

/** A vendor id as the vendor's JSON takes it: a number when the source id is numeric. */
export function vendorId(sourceId: string): number | string {
  return /^\d+$/.test(sourceId) ? Number(sourceId) : sourceId;
}

export function isNumericId(sourceId: string | null | undefined): boolean {
  return sourceId == null || /^\d+$/.test(sourceId);
}

/** Removes keys whose value is undefined, so a body never carries "field": undefined. */
export function defined<T extends Record<string, unknown>>(body: T): T {
  for (const k of Object.keys(body)) if (body[k] === undefined) delete body[k];
  return body;
}

/** `"Name"` with inner quotes escaped, for the messages that quote a value back to the caller. */
export function quoted(value: string): string {
  return JSON.stringify(value);
}

/** The finest unit any PSA connector records time in: ConnectWise's timeStart and timeEnd are whole seconds. */
const TIME_ENTRY_RESOLUTION_SECONDS = 1;

/**
 * A time entry whose hours round to nothing at the vendors' precision (its start would equal its end,
 * e.g. `hours: 5e-324`) is refused, on every connector: the one rule, checked before the connector's own.
 */
export function timeEntryHoursProblems(hours: number): FieldProblem[] {
  if (Math.round(hours * 3600 / TIME_ENTRY_RESOLUTION_SECONDS) >= 1) return [];
  return [{ field: 'hours', message: `hours must come to at least ${TIME_ENTRY_RESOLUTION_SECONDS} second once rounded to the vendor's precision; ${hours} rounds to nothing.` }];
}

/**
 * A time entry's span as the PSA writers send it: its start to the whole second, its end `hours` later
 * (to the millisecond). A vendor with a rule of its own on the span (Kaseya BMS: one day) adjusts this one.
 */
export function timeEntrySpan(start: Date, hours: number): { start: Date; end: Date } {
  const from = Math.floor(start.getTime() / 1000) * 1000;
  return { start: new Date(from), end: new Date(from + Math.round(hours * 3_600_000)) };
}
