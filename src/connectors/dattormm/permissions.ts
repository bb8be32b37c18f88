/**
 * What the connect flow asks before it saves a Datto RMM connection: one read-only call per thing the
 * service will do, each answering whether the API user's security level allows it. Datto RMM has no
 * permission listing; an API user acts with its user's security level, and a call it may not make
 * answers 403 ("Authenticated user doesn't have access to this resource", OpenAPI). The deploy write
 * cannot be tried without running something, so it is checked through the component list it needs;
 * a refusal of the quick job itself still comes back at commit as the vendor's 403.
 */
import type { SyncContext } from '../types';
import { VendorHttpError } from '../vendor-http';
import { dattoGet } from './client';

export interface PermissionCheck {
  /** What the service does with it: a resource it syncs or a write it makes. */
  capability: 'devices' | 'applications' | 'incidents' | 'packages' | 'device.deploy';
  ok: boolean;
  /** What the vendor said when it refused, in its words. */
  detail: string | null;
}

const CHECKS: { capability: PermissionCheck['capability']; path: string }[] = [
  { capability: 'devices', path: '/v2/account/devices' },
  { capability: 'incidents', path: '/v2/account/alerts/open' },
  // The software audit of a device is read with the same security level as the device list.
  { capability: 'applications', path: '/v2/account/devices' },
  { capability: 'packages', path: '/v2/account/components' },
  { capability: 'device.deploy', path: '/v2/account/components' },
];

/** One read (max=1) per capability; a 401 (bad key or secret) is thrown as it came, like the probe. */
export async function checkPermissions(ctx: Pick<SyncContext, 'baseUrl' | 'credentials' | 'http'>): Promise<PermissionCheck[]> {
  const answered = new Map<string, string | null>();
  const out: PermissionCheck[] = [];
  for (const c of CHECKS) {
    if (!answered.has(c.path)) {
      try {
        await dattoGet(ctx, c.path, { max: 1 });
        answered.set(c.path, null);
      } catch (err) {
        if (!(err instanceof VendorHttpError) || err.status !== 403) throw err;
        answered.set(c.path, `${c.path}: 403 ${typeof err.body === 'object' && err.body ? JSON.stringify(err.body) : ''}`.trim());
      }
    }
    const refused = answered.get(c.path) ?? null;
    out.push({ capability: c.capability, ok: refused == null, detail: refused });
  }
  return out;
}
