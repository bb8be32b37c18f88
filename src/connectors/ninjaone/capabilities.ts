import type { ConnectorCapabilities } from '../capabilities';
import { NINJA_PAGE_SIZE } from './client';
import { osFamily } from './connector';

export const ninjaOneCapabilities: ConnectorCapabilities = {
  // Device deploy: run the catalogue's install script on a device (./writer.ts).
  writes: ['device.deploy'],
  commits: 'live',
  pageSize: NINJA_PAGE_SIZE,
  credentials: ['clientId', 'clientSecret'],
  projectWrite: null,
  bookkeepingFields: ['lastContact', 'lastUpdate'],
  notes: { counted: 'never' },
  deviceOs: (native) => osFamily(native.nodeClass),
  // The device dashboard on the instance's origin.
  recordUrl(base, record, id) {
    if (record !== 'device') return null;
    return `${base.href.replace(/\/$/, '')}/#/deviceDashboard/${encodeURIComponent(id)}/overview`;
  },
};
