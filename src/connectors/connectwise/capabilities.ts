import type { ConnectorCapabilities } from '../capabilities';
import { CW_MAX_PAGE_SIZE } from './client';
import { checkConnectWisePermissions, CONNECTWISE_PERMISSIONS } from './permissions';

export const connectwiseCapabilities: ConnectorCapabilities = {
  writes: ['ticket.create', 'ticket.update', 'time.create', 'project.write', 'agreement.write', 'charge.approve'],
  commits: 'live',
  pageSize: CW_MAX_PAGE_SIZE,
  credentials: ['companyId', 'publicKey', 'privateKey', 'clientId'],
  projectWrite: 'project_ticket',
  // The list record says nothing about notes: the connector counts them for new tickets and tickets a note
  // touched only (connector.ts), so a stored 0 (after the initial import, say) may mean "not counted".
  bookkeepingFields: ['_info'],
  // ConnectWise publishes no hourly limit (docs/vendors.md: throttling unconfirmed; 429 + Retry-After is the
  // signal). A conservative default, shrunk further by AIMD on a 429; operators may set their own.
  budget: { requestsPerHour: 10_000, concurrent: 10 },
  notes: { counted: 'sometimes' },
  // ConnectWise stamps the member identifier in _info.enteredBy / updatedBy.
  actor(native, created) {
    const info = native._info as Record<string, unknown> | undefined;
    const who = created ? info?.enteredBy ?? info?.updatedBy : info?.updatedBy;
    return typeof who === 'string' && who ? who : null;
  },
  // The API host is api-<region>.myconnectwise.net, the UI host <region>.myconnectwise.net.
  recordUrl(base, record, id) {
    const recordType = record === 'ticket' ? 'ServiceFV' : record === 'company' ? 'CompanyFV' : null;
    if (!recordType) return null;
    const host = base.host.replace(/^api-/, '');
    const prefix = base.pathname.replace(/\/apis\/3\.0\/?$/, '');
    const query = new URLSearchParams({ locale: 'en_US', recordType, recid: id });
    return `${base.protocol}//${host}${prefix}/services/system_io/router/openrecord.rails?${query}`;
  },
  connect: {
    title: 'ConnectWise PSA',
    fields: [
      { name: 'companyId', label: 'Company ID', help: 'The company you sign in to ConnectWise PSA with (shown on its login page).', secret: false },
      { name: 'publicKey', label: 'Public key', help: 'System > Members > API Members > your API member > API Keys.', secret: false },
      { name: 'privateKey', label: 'Private key', help: 'Shown once in ConnectWise when the API key is created (System > Members > API Members > API Keys).', secret: true },
      { name: 'clientId', label: 'Client ID', help: 'The integration\'s client ID from developer.connectwise.com (ClientID); the ISV may give you theirs.', secret: false },
    ],
    baseUrl: {
      label: 'API address', placeholder: 'https://api-na.myconnectwise.net/v4_6_release/apis/3.0',
      help: 'Your ConnectWise site with its API path: api-<region>.myconnectwise.net/<codebase>apis/3.0 (the codebase is on System > My Company, or ask ConnectWise).',
      regions: [
        { label: 'North America', url: 'https://api-na.myconnectwise.net/v4_6_release/apis/3.0' },
        { label: 'Europe', url: 'https://api-eu.myconnectwise.net/v4_6_release/apis/3.0' },
        { label: 'Australia', url: 'https://api-au.myconnectwise.net/v4_6_release/apis/3.0' },
      ],
    },
    sandbox: {
      path: '/sandbox-vendors/connectwise/v4_6_release/apis/3.0',
      credentials: { companyId: 'sandbox', publicKey: 'sandbox-public', privateKey: 'sandbox-private', clientId: '00000000-0000-0000-0000-000000000000' },
      note: 'Public key sandbox-limited-public with private key sandbox-limited-private signs in as an API member whose security role lacks Service Tickets: Add.',
    },
    permissions: CONNECTWISE_PERMISSIONS,
    checkPermissions: checkConnectWisePermissions,
  },
};
