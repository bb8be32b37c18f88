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
  // Pax8 allows 1000 calls a minute ("API Rate Limits", devx.pax8.com; docs/vendors.md): a conservative
  // default well under it, AIMD on a 429.
  budget: { requestsPerHour: 10_000, concurrent: 5 },
  notes: { counted: 'never' },
  connect: {
    title: 'Pax8',
    fields: [
      { name: 'clientId', label: 'Client ID', help: 'Pax8 app > Integrations > API Credentials (devx.pax8.com): the Client ID of your Partner API application.', secret: false },
      { name: 'clientSecret', label: 'Client secret', help: 'Shown once in Pax8 when the API credentials are created.', secret: true },
    ],
    baseUrl: { label: 'API address', placeholder: 'https://api.pax8.com/v1', help: 'The Partner API root; https://api.pax8.com/v1 for every partner.', regions: [{ label: 'Pax8 Partner API', url: 'https://api.pax8.com/v1' }] },
    sandbox: { path: '/sandbox-vendors/pax8/v1', credentials: { clientId: 'sandbox', clientSecret: 'sandbox-secret' } },
    permissions: [
      { id: 'companies.read', capability: 'read', vendorTerms: 'Partner API: Companies (read)', checkedBy: 'GET /companies with the client\'s token' },
      // Pax8 has no read-only way to tell whether a client may create companies: shown as not checked.
      { id: 'companies.write', capability: 'company.create', vendorTerms: 'Partner API: Companies (write)', checkedBy: 'not checkable without creating a company' },
    ],
  },
};
