/**
 * Per-target access (docs/architecture.md, Tenancy, keys and grants): a write that names one record (a
 * project, an agreement, a linked ticket, a device) acts on it where the record sits on a connection the
 * caller holds the grant on. A record the caller can see, but only on connections where it holds no such
 * grant, is 403 `grant_missing`; a record on no connection the caller sees is unknown to it, exactly like
 * one that does not exist (each feature words its own not-found).
 */
import type { Connection } from '../../entities';
import { ServiceError } from '../errors/service-error';
import type { AccessService, TenantAccess } from './access.service';
import { Grant, type GrantKey } from './caller';

/** The record and the connection the caller may act on it through, or why not. */
export type TargetAccess<R> =
  | { permitted: true; record: R; connection: Connection }
  | { permitted: false; refusal: 'grant_missing' | 'not_found' };

/**
 * Where the caller may act on a record found on `records` (its copies, one per connection), given
 * `held`, the connections on which the caller holds the grant the write needs.
 */
export function targetAccess<R>(
  access: TenantAccess, held: readonly Connection[], records: readonly R[], connectionOf: (record: R) => string,
): TargetAccess<R> {
  for (const record of records) {
    const connection = held.find((c) => c.id === connectionOf(record));
    if (connection) return { permitted: true, record, connection };
  }
  const visible = records.some((r) => access.connections.some((c) => c.id === connectionOf(r)));
  return { permitted: false, refusal: visible ? 'grant_missing' : 'not_found' };
}

/** `targetAccess`, with its refusal thrown: `grant_missing` naming `key`, or the feature's own not-found. */
export function requireTarget<R>(
  access: TenantAccess, key: GrantKey, held: readonly Connection[], records: readonly R[],
  connectionOf: (record: R) => string, notFound: () => ServiceError,
): { record: R; connection: Connection } {
  const target = targetAccess(access, held, records, connectionOf);
  if (target.permitted) return target;
  throw target.refusal === 'grant_missing' ? ServiceError.grantMissing(key) : notFound();
}

/**
 * Where a company create acts (docs/architecture.md, Distributor): with a distributor fan-out, the
 * distributor the runner granted (`distributor.company.create`) and, beside it, the PSAs on which the
 * caller also holds `psa.company.create` for the match; otherwise the PSAs the runner granted.
 */
export function companyCreateTargets(
  access: AccessService, tenant: TenantAccess, granted: readonly Connection[], toDistributor: boolean,
): { psa: Connection[]; distributor: Connection | null } {
  if (!toDistributor) return { psa: [...granted], distributor: null };
  return { psa: access.holding(tenant, Grant.CompanyCreate, 'psa'), distributor: granted[0] };
}
