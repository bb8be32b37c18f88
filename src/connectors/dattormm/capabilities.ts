import type { ConnectorCapabilities, PermissionFinding, PermissionNeed } from '../capabilities';
import type { SyncContext } from '../types';
import { checkPermissions, type PermissionCheck } from './permissions';
import { DATTO_PAGE_SIZE } from './client';
import { deviceOsFamily } from './connector';

/**
 * The six Datto RMM platforms (regions), each its own API root (Datto RMM API help page; the same list
 * in the public clients named in docs/vendors.md). An account lives on one; the MSP picks it when
 * connecting, and the connection's base URL is that platform's API root.
 */
export const DATTO_RMM_PLATFORMS = [
  { platform: 'pinotage', region: 'Americas (Pinotage)' },
  { platform: 'merlot', region: 'Americas (Merlot)' },
  { platform: 'concord', region: 'EMEA (Concord)' },
  { platform: 'vidal', region: 'EMEA (Vidal)' },
  { platform: 'zinfandel', region: 'Asia Pacific (Zinfandel)' },
  { platform: 'syrah', region: 'United Kingdom (Syrah)' },
] as const;
export type DattoRmmPlatform = (typeof DATTO_RMM_PLATFORMS)[number]['platform'];

/** The API root of a platform: `https://<platform>-api.centrastage.net/api`. */
export function platformBaseUrl(platform: DattoRmmPlatform): string {
  return `https://${platform}-api.centrastage.net/api`;
}

/** What each capability needs: the API user's security level must allow the reads (and the component list a deploy runs from). */
const DATTO_RMM_PERMISSIONS: readonly PermissionNeed[] = [
  { id: 'devices', capability: 'read', vendorTerms: "the API user's security level: Devices (view)", checkedBy: 'one read of the account\'s devices' },
  { id: 'incidents', capability: 'read', vendorTerms: "the API user's security level: Alerts (view)", checkedBy: 'one read of the account\'s open alerts' },
  { id: 'device.deploy', capability: 'device.deploy', vendorTerms: "the API user's security level: Components and Jobs (run quick jobs)", checkedBy: 'one read of the account\'s components (the quick job itself cannot be tried without running it)' },
];

function permissionFindings(checks: PermissionCheck[]): PermissionFinding[] {
  return DATTO_RMM_PERMISSIONS.map((need) => {
    const c = checks.find((x) => x.capability === need.id);
    return { id: need.id, ok: c ? c.ok : null, ...(c?.detail ? { detail: c.detail } : {}) };
  });
}

export const dattoRmmCapabilities: ConnectorCapabilities = {
  // Device deploy: a component run on a device as a quick job (./writer.ts).
  writes: ['device.deploy'],
  commits: 'live',
  pageSize: DATTO_PAGE_SIZE,
  // The API key and API secret key generated for a Datto RMM user (Setup > Users > Generate API Keys);
  // the platform is the connection's base URL (platformBaseUrl).
  credentials: ['apiKey', 'apiSecret'],
  projectWrite: null,
  // The agent moves these on every check-in and audit: not a change to the device.
  bookkeepingFields: ['lastSeen', 'lastAuditDate'],
  // 600 requests per rolling 60 s per account (Datto RMM API help page). The hourly budget allows a
  // sustained 80 % of that; the client paces each minute under the vendor's cut-off (client.ts).
  budget: { requestsPerHour: 28_800, concurrent: 4 },
  notes: { counted: 'never' },
  deviceOs: deviceOsFamily,
  // No link is derived: the device page of the web portal is keyed by the device's numeric id, not
  // the uid we keep, and Device.portalUrl (the vendor's own link) is in each record's native payload.
  recordUrl: () => null,
  connect: {
    title: 'Datto RMM',
    fields: [
      { name: 'apiKey', label: 'API key', help: 'Setup > Users: open the API user and choose Generate API Keys (Setup > Global Settings > Access Control must allow API access).', secret: false },
      { name: 'apiSecret', label: 'API secret key', help: 'Shown once beside the API key when it is generated.', secret: true },
    ],
    baseUrl: {
      label: 'Platform', placeholder: platformBaseUrl('pinotage'),
      help: 'The platform your account lives on: the first part of the address you sign in to Datto RMM at (e.g. pinotage.centrastage.net).',
      regions: DATTO_RMM_PLATFORMS.map((p) => ({ label: p.region, url: platformBaseUrl(p.platform) })),
    },
    sandbox: { path: '/sandbox-vendors/dattormm/api', credentials: { apiKey: 'sandbox-beta', apiSecret: 'sandbox-secret' } },
    permissions: DATTO_RMM_PERMISSIONS,
    checkPermissions: async (ctx: SyncContext): Promise<PermissionFinding[]> => permissionFindings(await checkPermissions(ctx)),
  },
};
