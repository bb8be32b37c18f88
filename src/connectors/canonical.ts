/** Canonical vocabularies shared by every connector (docs/architecture.md, Reads). */
export const CANONICAL_STATUSES = ['new', 'in_progress', 'waiting', 'resolved', 'closed'] as const;
export type CanonicalStatus = (typeof CANONICAL_STATUSES)[number];
export const CANONICAL_PRIORITIES = ['low', 'medium', 'high', 'critical'] as const;
export type CanonicalPriority = (typeof CANONICAL_PRIORITIES)[number];

/**
 * A vendor status's canonical value: the connection's explicit mapping wins; without one, a closed
 * flag means `closed`; otherwise null (unmapped). We never guess from the name.
 */
export function canonicalStatus(
  mapping: Record<string, string>,
  nativeName: string | null | undefined,
  closedFlag = false,
): CanonicalStatus | null {
  if (nativeName != null) {
    const mapped = mapping[nativeName];
    if (mapped && (CANONICAL_STATUSES as readonly string[]).includes(mapped)) return mapped as CanonicalStatus;
  }
  return closedFlag ? 'closed' : null;
}

/**
 * A vendor priority's canonical value, from its name. Vendors name priorities freely
 * ("Priority 1 - Critical", "P3 Normal", "Urgent"); the words below cover the common schemes.
 */
export function canonicalPriority(nativeName: string | null | undefined): CanonicalPriority | null {
  if (!nativeName) return null;
  const n = nativeName.toLowerCase();
  if (/critical|emergency|urgent|\bp1\b|priority 1\b/.test(n)) return 'critical';
  if (/high|\bp2\b|priority 2\b/.test(n)) return 'high';
  if (/medium|normal|moderate|\bp3\b|priority 3\b/.test(n)) return 'medium';
  if (/low|\bp4\b|\bp5\b|priority [45]\b|planning/.test(n)) return 'low';
  return null;
}

/** Parses a vendor time (ISO string or epoch seconds) to a Date, or null. */
export function parseVendorTime(value: unknown): Date | null {
  if (value == null || value === '') return null;
  if (typeof value === 'number') return new Date(value < 1e12 ? value * 1000 : value);
  if (typeof value === 'string') {
    const d = new Date(value);
    return Number.isNaN(d.getTime()) ? null : d;
  }
  return null;
}
