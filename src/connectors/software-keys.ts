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
