/**
 * NinjaOne permission checks for the connect page: one token request (read-only), whose answer names the
 * scopes NinjaOne granted the client app; a token from a user's authorisation carries that user's
 * context, which `script/run` needs (client.ts; docs/vendors.md, third pass).
 */
import type { PermissionFinding, PermissionNeed } from '../capabilities';
import type { SyncContext } from '../types';
import { tokenGrant } from './client';

export const NINJAONE_PERMISSIONS: readonly PermissionNeed[] = [
  { id: 'scope.monitoring', capability: 'read', vendorTerms: 'API client app scope: Monitoring', checkedBy: 'the scopes of the token NinjaOne issues' },
  { id: 'scope.control', capability: 'device.deploy', vendorTerms: 'API client app scope: Control', checkedBy: 'the scopes of the token NinjaOne issues' },
  { id: 'user-context', capability: 'device.deploy', vendorTerms: 'a NinjaOne user\'s sign-in and approval (Authorization Code grant)', checkedBy: 'whether the connection holds a user\'s authorisation' },
];

export async function checkNinjaOnePermissions(ctx: SyncContext): Promise<PermissionFinding[]> {
  const grant = await tokenGrant(ctx);
  const scope = (s: string) => ({ ok: grant.scopes.includes(s), detail: `token scopes: ${grant.scopes.join(' ') || 'none'}` });
  return [
    { id: 'scope.monitoring', ...scope('monitoring') },
    { id: 'scope.control', ...scope('control') },
    { id: 'user-context', ok: grant.userContext, detail: grant.userContext ? 'authorised by a NinjaOne user' : 'client credentials only: NinjaOne answers script runs with "Access key does not have user context"' },
  ];
}
