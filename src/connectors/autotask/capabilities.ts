import type { ConnectorCapabilities } from '../capabilities';
import { AUTOTASK_PERMISSIONS, checkAutotaskPermissions } from './permissions';
import { AUTOTASK_PAGE_SIZE } from './client';

export const autotaskCapabilities: ConnectorCapabilities = {
  writes: ['ticket.create', 'ticket.update', 'time.create', 'project.write', 'agreement.write'],
  commits: 'live',
  pageSize: AUTOTASK_PAGE_SIZE,
  credentials: ['username', 'secret', 'integrationCode'],
  projectWrite: 'project_ticket',
  bookkeepingFields: [
    'lastActivityDate', 'lastActivityPersonType', 'lastActivityResourceID', 'lastTrackedModificationDateTime',
    'lastTrackedModifiedDateTime', 'lastCustomerNotificationDateTime', 'lastCustomerVisibleActivityDateTime',
  ],
  // Autotask allows 10,000 requests per rolling hour per database for every integration together and 3
  // concurrent threads per endpoint (docs/vendors.md; Autotask REST API "thresholds and limits"): we take half.
  budget: { requestsPerHour: 5_000, concurrent: 3 },
  notes: { counted: 'always' },
  // API host webservicesN.autotask.net, UI host wwN.autotask.net.
  recordUrl(base, record, id) {
    const host = base.host.replace(/^webservices(\d+)\./, 'ww$1.');
    const origin = `${base.protocol}//${host}${base.pathname.replace(/\/atservicesrest\/v1\.0\/?$/i, '')}`;
    if (record === 'ticket') return `${origin}/Mvc/ServiceDesk/TicketDetail.mvc?ticketId=${encodeURIComponent(id)}`;
    if (record === 'company') return `${origin}/Mvc/CRM/AccountDetail.mvc?accountId=${encodeURIComponent(id)}`;
    return null;
  },
  connect: {
    title: 'Autotask PSA',
    fields: [
      { name: 'username', label: 'API user name', help: 'Admin > Resources (Users) > your API user (API User (system) security level): its Username.', secret: false },
      { name: 'secret', label: 'Secret', help: 'The API user\'s Password (Secret), set in Autotask when the API user is created.', secret: true },
      { name: 'integrationCode', label: 'API tracking identifier', help: 'The API user\'s Security tab > API Tracking Identifier (the ISV\'s integration code, or a custom one).', secret: false },
    ],
    baseUrl: {
      label: 'API address', placeholder: 'https://webservices2.autotask.net/atservicesrest/v1.0',
      help: 'Your database\'s zone: webservices<N>.autotask.net/atservicesrest/v1.0. The test names the right zone if this one is not.',
    },
    sandbox: { path: '/sandbox-vendors/autotask/atservicesrest/v1.0', credentials: { username: 'sandbox', secret: 'sandbox-secret', integrationCode: 'SANDBOX' } },
    permissions: AUTOTASK_PERMISSIONS,
    checkPermissions: checkAutotaskPermissions,
  },
};
