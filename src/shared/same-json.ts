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

/**
 * The top-level keys of a payload that moved against its `previous` copy, sorted; `skip` are keys that do
 * not count (a vendor's bookkeeping stamps). The one rule for "did anything but bookkeeping move": the
 * change detector lists them in an event, the record writer tells a touch (none) from an edit.
 */
export function movedKeys(native: Record<string, unknown>, previous: unknown, skip: ReadonlySet<string>): string[] {
  const old = previous && typeof previous === 'object' ? (previous as Record<string, unknown>) : {};
  const out: string[] = [];
  for (const k in native) if (!skip.has(k) && !sameJson(native[k], old[k])) out.push(k);
  for (const k in old) if (!Object.prototype.hasOwnProperty.call(native, k) && !skip.has(k) && old[k] !== undefined) out.push(k);
  return out.sort();
}
