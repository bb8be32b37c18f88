import type { ConnectorCapabilities } from '../capabilities';
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
};
