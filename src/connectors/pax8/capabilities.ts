import type { ConnectorCapabilities } from '../capabilities';
import { PAX8_PAGE_SIZE } from './connector';

export const pax8Capabilities: ConnectorCapabilities = {
  // Company create at the distributor (design.md section 14): company-writer.ts.
  writes: ['company.create'],
  commits: 'live',
  pageSize: PAX8_PAGE_SIZE,
  credentials: ['clientId', 'clientSecret'],
  projectWrite: null,
  bookkeepingFields: [],
  notes: { counted: 'never' },
};
