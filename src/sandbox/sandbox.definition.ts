/** The two sandbox tenants (design.md section 4). Credentials are public development values. */
import type { ConnectionKind, ConnectorName } from '../../entities/tenancy';
import { GRANT_KEYS, type GrantKey } from '../tenants/caller';

export interface SandboxConnectionDef {
  kind: ConnectionKind;
  connector: ConnectorName;
  /** Path under our public URL. */
  path: string;
  credentials: Record<string, string>;
}

export interface SandboxTenantDef {
  slug: 'sandbox-alpha' | 'sandbox-beta';
  name: string;
  connections: SandboxConnectionDef[];
  grants: readonly GrantKey[];
}

const vendorClient = (clientId = 'sandbox') => ({ clientId, clientSecret: 'sandbox-secret' });

export const SANDBOX_ISV_NAME = 'Sandbox ISV';

export const SANDBOX_TENANTS: readonly SandboxTenantDef[] = [
  {
    slug: 'sandbox-alpha',
    name: 'Sandbox Alpha MSP',
    connections: [
      {
        kind: 'psa', connector: 'connectwise', path: '/sandbox-vendors/connectwise/v4_6_release/apis/3.0',
        credentials: { companyId: 'sandbox', publicKey: 'sandbox-public', privateKey: 'sandbox-private', clientId: '00000000-0000-0000-0000-000000000000' },
      },
      { kind: 'rmm', connector: 'ninjaone', path: '/sandbox-vendors/ninjaone', credentials: vendorClient() },
      { kind: 'distributor', connector: 'pax8', path: '/sandbox-vendors/pax8/v1', credentials: vendorClient() },
    ],
    grants: GRANT_KEYS,
  },
  {
    slug: 'sandbox-beta',
    name: 'Sandbox Beta MSP',
    connections: [
      { kind: 'psa', connector: 'halopsa', path: '/sandbox-vendors/halopsa', credentials: vendorClient() },
      // Both tenants use the NinjaOne simulator; the client id selects the dataset.
      { kind: 'rmm', connector: 'ninjaone', path: '/sandbox-vendors/ninjaone', credentials: vendorClient('sandbox-beta') },
    ],
    // Every grant but psa.company.events, so grant_missing can be seen here.
    grants: GRANT_KEYS.filter((k) => k !== 'psa.company.events'),
  },
];

/** The sandbox ISV's write-back recommendation (design.md section 4). */
export const SANDBOX_RECOMMENDATION = { technical: 'service_ticket', organizational: 'project' };
