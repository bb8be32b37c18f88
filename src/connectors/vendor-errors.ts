/**
 * A vendor's refusal of a write's content, carried back to the pipeline as field problems named after
 * the request fields the caller sent, so the caller gets 422 `validation` with something to fix.
 * Throttling and outages are not refusals: they stay VendorHttpError (429/503/network).
 */
import type { ConnectorName } from '../../entities/tenancy';
import type { FieldProblem } from './write-types';

export class VendorValidationError extends Error {
  constructor(
    readonly connector: ConnectorName,
    readonly problems: FieldProblem[],
    /** The vendor's HTTP status and body, for logs (never shown as-is to the caller). */
    readonly vendorStatus: number,
    readonly vendorBody: unknown,
  ) {
    super(problems.map((p) => `${p.field}: ${p.message}`).join(' ') || `${connector} refused the write.`);
    this.name = 'VendorValidationError';
  }
}

/** Vendor field name (lower-case) -> the request field it came from. */
export type FieldMap = Readonly<Record<string, string>>;

/** The request field behind a vendor field, or `fallback` when the vendor named none we know. */
export function requestField(vendorField: string | null | undefined, map: FieldMap, fallback: string): string {
  if (!vendorField) return fallback;
  return map[vendorField.toLowerCase()] ?? fallback;
}

/**
 * The request field a free-text vendor message is about: the first vendor field of `map` named in it
 * as a whole word (Autotask and Halo name the field in the sentence instead of a separate property).
 */
export function fieldNamedIn(message: string, map: FieldMap, fallback: string): string {
  let best: { at: number; field: string } | null = null;
  for (const [vendorField, field] of Object.entries(map)) {
    const m = new RegExp(`\\b${vendorField.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`, 'i').exec(message);
    if (m && (!best || m.index < best.at)) best = { at: m.index, field };
  }
  return best?.field ?? fallback;
}
