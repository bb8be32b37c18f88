import type { ConnectorCapabilities } from '../capabilities';
import { NINJA_PAGE_SIZE } from './client';

export const ninjaOneCapabilities: ConnectorCapabilities = {
  writes: [],
  commits: 'live',
  pageSize: NINJA_PAGE_SIZE,
  credentials: ['clientId', 'clientSecret'],
  projectWrite: null,
  bookkeepingFields: ['lastContact', 'lastUpdate'],
  notes: { counted: 'never' },
  // The device dashboard on the instance's origin.
  recordUrl(base, record, id) {
    if (record !== 'device') return null;
    return `${base.href.replace(/\/$/, '')}/#/deviceDashboard/${encodeURIComponent(id)}/overview`;
  },
};
