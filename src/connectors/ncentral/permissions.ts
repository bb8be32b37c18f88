/**
 * What the connect flow asks before it saves an N-central connection: one read-only call per thing the
 * service reads, each answering whether the API user's role and access groups allow it. N-central has no
 * permission listing: the user acts with its roles, and a call it may not make is refused with 403
 * (or 401 for a User-API Token that is not valid, thrown as it came, like the probe).
 */
import type { PermissionFinding, PermissionNeed } from '../capabilities';
import type { SyncContext } from '../types';
import { VendorHttpError } from '../vendor-http';
import { ncGet } from './client';

export const NCENTRAL_PERMISSIONS: readonly PermissionNeed[] = [
  { id: 'customers', capability: 'read', vendorTerms: "the API user's role: Customers (view), with an access group that holds the customers", checkedBy: 'one read of the customers (pageSize=1)' },
  { id: 'devices', capability: 'read', vendorTerms: "the API user's role: Devices (view) and Asset Management (view), with a device access group", checkedBy: 'one read of the devices (pageSize=1)' },
  { id: 'active-issues', capability: 'read', vendorTerms: "the API user's role: Active Issues (view)", checkedBy: "one read of the first service organisation's active issues (pageSize=1)" },
];

async function check(ctx: SyncContext, path: string): Promise<{ ok: boolean; detail?: string }> {
  try {
    await ncGet(ctx, path, { pageSize: 1 });
    return { ok: true };
  } catch (err) {
    if (!(err instanceof VendorHttpError) || err.status !== 403) throw err;
    const said = typeof err.body === 'object' && err.body ? (err.body as Record<string, unknown>).message : null;
    return { ok: false, detail: `${path}: 403${typeof said === 'string' ? ` ${said}` : ''}` };
  }
}

export async function checkNcentralPermissions(ctx: SyncContext): Promise<PermissionFinding[]> {
  const orgs = await ncGet<{ data?: { soId?: unknown }[] }>(ctx, '/api/service-orgs', { pageSize: 1 });
  const soId = orgs?.data?.[0]?.soId;
  return [
    { id: 'customers', ...await check(ctx, '/api/customers') },
    { id: 'devices', ...await check(ctx, '/api/devices') },
    soId == null
      ? { id: 'active-issues', ok: null, detail: 'no service organisation is visible to the API user' }
      : { id: 'active-issues', ...await check(ctx, `/api/org-units/${encodeURIComponent(String(soId))}/active-issues`) },
  ];
}
