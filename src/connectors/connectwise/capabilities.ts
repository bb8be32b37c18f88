import type { ConnectorCapabilities } from '../capabilities';
import { CW_MAX_PAGE_SIZE } from './client';

export const connectwiseCapabilities: ConnectorCapabilities = {
  writes: ['ticket.create', 'ticket.update', 'time.create', 'project.write', 'agreement.write', 'charge.approve'],
  commits: 'live',
  pageSize: CW_MAX_PAGE_SIZE,
  credentials: ['companyId', 'publicKey', 'privateKey', 'clientId'],
  projectWrite: 'project_ticket',
  // The list record says nothing about notes: the connector counts them per changed ticket on
  // incremental reads only (connector.ts), so a stored 0 after the initial import means "not counted".
  bookkeepingFields: ['_info'],
  // ConnectWise publishes no hourly limit (docs/vendors.md: throttling unconfirmed; 429 + Retry-After is the
  // signal). A conservative default, shrunk further by AIMD on a 429; operators may set their own.
  budget: { requestsPerHour: 10_000, concurrent: 10 },
  notes: { counted: 'incremental' },
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
};
