/**
 * The vendor permissions each connection was last found to lack (docs/architecture.md, Connect sessions
 * and console). The connect page checks them with the connector's declared checks when the MSP presses
 * Test, and a completed connect session keeps what was missing per connection; the latest completed
 * session that connected or repaired a connection is what is known of it (a Reconnect checks again).
 * A connection no session made (internal tooling, the sandbox) has no known gap. From these, `blockedKeys`
 * says which grants cannot work there: the console shows them off and `set_grants` refuses them.
 */
import type { DataSource } from 'typeorm';
import type { Connection } from '../../entities';
import { completedSessionFindings } from './permission-gaps.store';
import { blockedKeys, type Blocked } from './grant-words';
import type { GrantKey } from './caller';

/** A vendor permission a connection lacks, as the connect session recorded it. */
export interface PermissionGap {
  capability: string;
  /** The permission as the vendor's admin screens name it. */
  vendorTerms: string;
  /** What the vendor said (e.g. the security role and its level). */
  detail: string | null;
  /** When it was found (the session's completion). */
  foundAt: Date;
}

interface StoredMissing { kind?: string; connector?: string; permission?: string; capability?: string; detail?: string | null }

/** Per connection of `connections`, the permissions it was last found to lack (absent: none known). */
export async function permissionGaps(ds: DataSource, tenantId: string, connections: readonly Pick<Connection, 'id' | 'kind' | 'connector'>[]): Promise<Map<string, PermissionGap[]>> {
  const out = new Map<string, PermissionGap[]>();
  if (!connections.length) return out;
  const sessions = await completedSessionFindings(ds, tenantId);
  for (const c of connections) {
    // The latest completed session that connected or repaired it: what was found then is what is known.
    const s = sessions.find((x) => x.connectionIds.includes(c.id));
    if (!s) continue;
    const gaps = (s.missingPermissions as StoredMissing[])
      .filter((m) => m.kind === c.kind && m.connector === c.connector && m.capability && m.permission)
      .map((m) => ({ capability: m.capability!, vendorTerms: m.permission!, detail: m.detail ?? null, foundAt: s.completedAt! }));
    if (gaps.length) out.set(c.id, gaps);
  }
  return out;
}

/** Per connection, the grants its known gaps rule out. */
export async function blockedGrantsByConnection(ds: DataSource, tenantId: string, connections: readonly Pick<Connection, 'id' | 'kind' | 'connector'>[]): Promise<Map<string, Map<GrantKey, Blocked<PermissionGap>>>> {
  const gaps = await permissionGaps(ds, tenantId, connections);
  const out = new Map<string, Map<GrantKey, Blocked<PermissionGap>>>();
  for (const c of connections) {
    const blocked = blockedKeys(c.kind, gaps.get(c.id) ?? []);
    if (blocked.size) out.set(c.id, blocked);
  }
  return out;
}
