import type { ConnectorCapabilities } from '../capabilities';
import { PAX8_PAGE_SIZE } from './connector';

export const pax8Capabilities: ConnectorCapabilities = {
  // Company create at the distributor (docs/architecture.md, Distributor): company-writer.ts.
  writes: ['company.create'],
  commits: 'live',
  pageSize: PAX8_PAGE_SIZE,
  credentials: ['clientId', 'clientSecret'],
  projectWrite: null,
  bookkeepingFields: [],
  // Pax8 rate-limits its public API ("API Rate Limits", devx.pax8.com; figure not confirmed here): a
  // conservative default well under it, AIMD on a 429.
  budget: { requestsPerHour: 10_000, concurrent: 5 },
  notes: { counted: 'never' },
};
