/**
 * The subset of NinjaOne's device filter syntax (`df` query parameter) the simulator understands:
 * clauses joined by AND, each one of
 *   org|loc|role|id|class|status  (= | != | in | notin)  value or (v1, v2, ...)
 *   online | offline
 *   created (after | before) YYYY-MM-DD
 * e.g. `org = 3 AND class in (WINDOWS_SERVER, LINUX_SERVER) AND offline`.
 * Anything else is rejected, as the real API rejects a filter it cannot parse.
 */
import type { NinjaDevice } from './types';

export class DeviceFilterError extends Error {}

export type DevicePredicate = (device: NinjaDevice) => boolean;

const FIELD_OF: Record<string, (d: NinjaDevice) => unknown> = {
  org: (d) => d.organizationId,
  loc: (d) => d.locationId,
  role: (d) => d.nodeRoleId,
  id: (d) => d.id,
  class: (d) => d.nodeClass,
  status: (d) => d.approvalStatus,
};

function parseValues(raw: string): string[] {
  const text = raw.trim();
  const inner = text.startsWith('(') && text.endsWith(')') ? text.slice(1, -1) : text;
  return inner.split(',').map((v) => v.trim().replace(/^['"]|['"]$/g, '')).filter((v) => v !== '');
}

function parseClause(clause: string): DevicePredicate {
  const c = clause.trim();
  const lower = c.toLowerCase();
  if (lower === 'online') return (d) => !d.offline;
  if (lower === 'offline') return (d) => d.offline;

  const created = /^created\s+(after|before)\s+(\d{4}-\d{2}-\d{2})$/i.exec(c);
  if (created) {
    const at = Date.parse(`${created[2]}T00:00:00Z`) / 1000;
    return created[1].toLowerCase() === 'after' ? (d) => (d.created ?? 0) > at : (d) => (d.created ?? 0) < at;
  }

  const m = /^(\w+)\s*(=|!=|\bnotin\b|\bin\b)\s*(.+)$/i.exec(c);
  if (!m) throw new DeviceFilterError(`cannot parse device filter clause "${c}"`);
  const read = FIELD_OF[m[1].toLowerCase()];
  if (!read) throw new DeviceFilterError(`unknown device filter field "${m[1]}"`);
  const values = new Set(parseValues(m[3]).map((v) => v.toUpperCase()));
  if (values.size === 0) throw new DeviceFilterError(`no value in device filter clause "${c}"`);
  const negate = m[2] === '!=' || m[2].toLowerCase() === 'notin';
  return (d) => {
    const v = read(d);
    const hit = v != null && values.has(String(v).toUpperCase());
    return negate ? !hit : hit;
  };
}

/** A predicate for `df`, or null when there is no filter. Throws DeviceFilterError on bad syntax. */
export function parseDeviceFilter(df: string | undefined): DevicePredicate | null {
  if (df == null || df.trim() === '') return null;
  const predicates = df.split(/\s+AND\s+/i).map(parseClause);
  return (d) => predicates.every((p) => p(d));
}
