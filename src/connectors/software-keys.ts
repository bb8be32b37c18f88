/**
 * Stable keys for installed-software rows. RMM software inventories give a row no id of its own: the
 * device, the name and the version key it, and the same name and version twice on one device (two
 * install locations) get a `#n` suffix in inventory order, so a re-read keys every row as before.
 * Connector-neutral: every RMM whose inventory has no row ids uses it.
 */

/** `device:name:version`, then `#2`, `#3`... for repeats; one call per device's rows, in inventory order. */
export function softwareKeys(deviceId: string, rows: readonly { name: string; version: string | null }[]): string[] {
  const seen = new Map<string, number>();
  return rows.map(({ name, version }) => {
    const key = `${deviceId}:${name}:${version ?? ''}`;
    const n = (seen.get(key) ?? 0) + 1;
    seen.set(key, n);
    return n === 1 ? key : `${key}#${n}`;
  });
}

/** What one inventory row says of an installed application, in the connector's reading of its fields. */
export interface SoftwareRow {
  name: string | null;
  version: string | null;
  publisher: string | null;
  installedAt: string | null;
}

/**
 * One device's inventory rows as application records: a row without a name (or not an object) is
 * skipped, the rest keyed by softwareKeys in inventory order. `read` picks the fields of a row.
 */
export function softwareRecords<Row extends Record<string, unknown>>(deviceId: string, rows: readonly unknown[], read: (row: Row) => SoftwareRow): {
  sourceId: string; native: Row; vendorUpdatedAt: null;
  fields: { name: string; publisher: string | null; version: string | null; deviceSourceId: string; installedAt: string | null };
}[] {
  const named = rows.flatMap((row) => {
    if (!row || typeof row !== 'object' || Array.isArray(row)) return [];
    const r = read(row as Row);
    return r.name ? [{ row: row as Row, ...r, name: r.name }] : [];
  });
  const keys = softwareKeys(deviceId, named);
  return named.map(({ row, name, version, publisher, installedAt }, i) => ({
    sourceId: keys[i], native: row, vendorUpdatedAt: null, fields: { name, publisher, version, deviceSourceId: deviceId, installedAt },
  }));
}
