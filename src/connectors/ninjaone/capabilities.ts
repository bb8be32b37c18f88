import type { ConnectorCapabilities } from '../capabilities';
import { NINJA_PAGE_SIZE } from './client';
import { osFamily } from './connector';

export const ninjaOneCapabilities: ConnectorCapabilities = {
  // Device deploy: run the catalogue's install script on a device (./writer.ts).
  writes: ['device.deploy'],
  commits: 'live',
  pageSize: NINJA_PAGE_SIZE,
  credentials: ['clientId', 'clientSecret'],
  // The refresh token of an authorisation by a NinjaOne user (authorization-code grant): a token with
  // user context, which script/run requires (client.ts). Without it the connection reads but cannot deploy.
  optionalCredentials: ['refreshToken'],
  projectWrite: null,
  bookkeepingFields: ['lastContact', 'lastUpdate'],
  // NinjaOne's v2 API publishes no limit we could confirm (docs/vendors.md): a conservative default, AIMD on a 429.
  budget: { requestsPerHour: 5_000, concurrent: 5 },
  notes: { counted: 'never' },
  deviceOs: (native) => osFamily(native.nodeClass),
  // The device dashboard on the instance's origin.
  recordUrl(base, record, id) {
    if (record !== 'device') return null;
    return `${base.href.replace(/\/$/, '')}/#/deviceDashboard/${encodeURIComponent(id)}/overview`;
  },
};
