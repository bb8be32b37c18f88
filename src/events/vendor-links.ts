/**
 * Deep links into the vendor's own UI, derived from the connection's API base URL, so that an event
 * can take a person straight to the record. Null when the vendor UI has no stable link for it.
 */
import type { ConnectorName } from '../../entities/tenancy';

export type LinkedRecord = 'ticket' | 'device' | 'company';

function parse(baseUrl: string): URL | null {
  try {
    return new URL(baseUrl);
  } catch {
    return null;
  }
}

/** ConnectWise: the API host is api-<region>.myconnectwise.net, the UI host <region>.myconnectwise.net. */
function connectwise(base: URL, record: LinkedRecord, id: string): string | null {
  const recordType = record === 'ticket' ? 'ServiceFV' : record === 'company' ? 'CompanyFV' : null;
  if (!recordType) return null;
  const host = base.host.replace(/^api-/, '');
  const prefix = base.pathname.replace(/\/apis\/3\.0\/?$/, '');
  const query = new URLSearchParams({ locale: 'en_US', recordType, recid: id });
  return `${base.protocol}//${host}${prefix}/services/system_io/router/openrecord.rails?${query}`;
}

/** Autotask: API host webservicesN.autotask.net, UI host wwN.autotask.net. */
function autotask(base: URL, record: LinkedRecord, id: string): string | null {
  const host = base.host.replace(/^webservices(\d+)\./, 'ww$1.');
  const origin = `${base.protocol}//${host}${base.pathname.replace(/\/atservicesrest\/v1\.0\/?$/i, '')}`;
  if (record === 'ticket') return `${origin}/Mvc/ServiceDesk/TicketDetail.mvc?ticketId=${encodeURIComponent(id)}`;
  if (record === 'company') return `${origin}/Mvc/CRM/AccountDetail.mvc?accountId=${encodeURIComponent(id)}`;
  return null;
}

/** HaloPSA: the agent UI shares the API's origin (the connection base URL is the instance URL). */
function halopsa(base: URL, record: LinkedRecord, id: string): string | null {
  const root = base.href.replace(/\/$/, '');
  if (record === 'ticket') return `${root}/ticket?id=${encodeURIComponent(id)}`;
  if (record === 'company') return `${root}/customers?clientid=${encodeURIComponent(id)}`;
  return null;
}

/** NinjaOne: the device dashboard on the instance's origin. */
function ninjaone(base: URL, record: LinkedRecord, id: string): string | null {
  if (record !== 'device') return null;
  return `${base.href.replace(/\/$/, '')}/#/deviceDashboard/${encodeURIComponent(id)}/overview`;
}

export function vendorUrl(connector: ConnectorName | string, baseUrl: string, record: LinkedRecord, id: string): string | null {
  const base = parse(baseUrl);
  if (!base) return null;
  switch (connector) {
    case 'connectwise': return connectwise(base, record, id);
    case 'autotask': return autotask(base, record, id);
    case 'halopsa': return halopsa(base, record, id);
    case 'ninjaone': return ninjaone(base, record, id);
    default: return null;
  }
}
