/**
 * Equality of two JSON values with object key order aside: jsonb does not keep key order, so a stored
 * payload comes back reordered. A member whose value is undefined counts as absent, as in JSON text.
 * A walk that stops at the first difference: no text is built (sorting keys into a string per compare
 * cost the change path more than the rest of change detection).
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (a instanceof Date || b instanceof Date) {
    return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
  }
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let members = 0;
  for (const k in x) {
    if (!Object.prototype.hasOwnProperty.call(x, k) || x[k] === undefined) continue;
    members++;
    if (!Object.prototype.hasOwnProperty.call(y, k) || !sameJson(x[k], y[k])) return false;
  }
  for (const k in y) if (Object.prototype.hasOwnProperty.call(y, k) && y[k] !== undefined) members--;
  return members === 0;
}
