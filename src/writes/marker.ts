/**
 * The write marker and whose keys a write uses (docs/architecture.md, Writes). A feature's service plans a
 * write with the marker before it hands the plan to the skeleton, so both derive it here the same way.
 */
import { createHash, randomUUID } from 'node:crypto';
import { isvOf } from '../access/access.service';
import { isMspOf, type Caller } from '../access/caller';

/**
 * Whose idempotency keys a write uses: the ISV's, or for an MSP key (charge approval) the tenant's
 * own, which no ISV id can equal. Admin callers make no write.
 */
export function writeOwner(caller: Caller, tenantId: string): string {
  if (isMspOf(caller, tenantId)) return tenantId;
  return isvOf(caller);
}

/**
 * The write marker, stored at the vendor so that a write of unknown outcome can be found again. It
 * derives from the idempotency key, so a preview shows the very marker a commit sends and a retry
 * after a failure finds what an earlier try may have landed.
 */
export function writeMarker(isvId: string, tenantId: string, operation: string, key: string | null | undefined): string {
  if (!key) return `msp-${randomUUID().replace(/-/g, '').slice(0, 24)}`;
  const h = createHash('sha256').update(`${isvId}\n${tenantId}\n${operation}\n${key}`).digest('hex');
  return `msp-${h.slice(0, 24)}`;
}

/** The marker of `caller`'s write `operation` under `key` on the tenant. */
export function markerFor(caller: Caller, tenantId: string, operation: string, key: string | null | undefined): string {
  return writeMarker(writeOwner(caller, tenantId), tenantId, operation, key);
}
