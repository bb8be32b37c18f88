import type { ConnectorCapabilities } from '../capabilities';
import { PAX8_PAGE_SIZE } from './connector';

export const pax8Capabilities: ConnectorCapabilities = {
  writes: [],
  commits: 'live',
  pageSize: PAX8_PAGE_SIZE,
  credentials: ['clientId', 'clientSecret'],
  projectWrite: null,
  bookkeepingFields: [],
  notes: { counted: 'never' },
};
