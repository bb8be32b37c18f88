import type { ConnectorCapabilities } from '../capabilities';
import { vendorSession } from '../vendor-session';
import { BMS_PAGE_SIZE, bmsGet, bmsProfile, type BmsRecord } from './client';

/**
 * Kaseya BMS, a full PSA connector. Agreement writes are `add` only (writes.ts says why); BMS has no
 * idempotency key, so every write carries our marker (writer.ts).
 */
export const kaseyaBmsCapabilities: ConnectorCapabilities = {
  writes: ['ticket.create', 'ticket.update', 'time.create', 'agreement.write'],
  commits: 'live',
  pageSize: BMS_PAGE_SIZE,
  credentials: ['username', 'password', 'tenant'],
  projectWrite: null,
  unsupported: {
    // The whole Project section of BMS API 2.0: projects read (summary, by id, lookup), project statuses
    // (configuration), tasks read (POST /v2/project/tasks is GetTasksList, a search, as are searchselect and
    // relateditems). No operation creates a task or a note on a project.
    'project.write': 'BMS API 2.0 documents projects and their tasks only to read (POST /v2/project/tasks is GetTasksList, a search) and no operation that adds a task or a note to a project',
  },
  // BMS's ticket list has no note count; LastActivityUpdate moves with a note (and with every other change).
  notes: { counted: 'never', stampField: 'LastActivityUpdate' },
  bookkeepingFields: ['ModifiedOn', 'ModifiedBy', 'LastActivityUpdate'],
  // "The V2 API call limit is 1500 per hour per endpoint" (help.bms.kaseya.com, "V2 BMS Rest APIs"). The
  // budget is the connection's across its dozen endpoints; the busiest, the ticket list, is polled at most
  // every 10 s (360 an hour, with as many status lookups), well under one endpoint's 1,500. A 429 past
  // it backs off on Retry-After like any other.
  budget: { requestsPerHour: 4_500, concurrent: 3 },
  connect: {
    title: 'Kaseya BMS',
    fields: [
      { name: 'username', label: 'User name', help: 'An API Employee (Admin > HR > Employees, User Type "API Employee") whose security role has Admin > Special Features > Has API Access.', secret: false },
      { name: 'password', label: 'Password', help: 'The API employee\'s password (sent to it by email when the employee was created).', secret: true },
      { name: 'tenant', label: 'Company name', help: 'My Settings (your name in the top navigation bar): the Company (tenant) name.', secret: false },
    ],
    baseUrl: {
      label: 'API server',
      help: 'The API server of your BMS region ("V2 BMS Rest APIs"): the one beside your Gateway URL under My Settings.',
      regions: [
        { label: 'North America (bms.kaseya.com)', url: 'https://api.bms.kaseya.com' },
        { label: 'Europe (bmsemea.kaseya.com)', url: 'https://api.bmsemea.kaseya.com' },
        { label: 'Asia Pacific (bmsapac.kaseya.com)', url: 'https://api.bmsapac.kaseya.com' },
        { label: 'Vorex (vorexlogin.com)', url: 'https://api.vorexlogin.com' },
      ],
    },
    sandbox: {
      path: '/sandbox-vendors/kaseyabms',
      credentials: { username: 'sandbox', password: 'sandbox-secret', tenant: 'SANDBOX-GAMMA' },
      note: 'User sandbox-limited (same password and company) is an API employee whose role may view but not modify tickets.',
    },
    permissions: [
      { id: 'api.access', capability: 'read', vendorTerms: 'Security role: Admin > Special Features > Has API Access', checkedBy: 'signing in at POST /v2/security/authenticate' },
      { id: 'tickets.modify', capability: 'ticket.create', vendorTerms: 'Security role: Service Desk > Tickets, Modify', checkedBy: 'GET /v2/security/userinfo (UserAccessRights, CanModify)' },
      { id: 'tickets.modify.update', capability: 'ticket.update', vendorTerms: 'Security role: Service Desk > Tickets, Modify', checkedBy: 'GET /v2/security/userinfo (UserAccessRights, CanModify)' },
      { id: 'tickets.modify.time', capability: 'time.create', vendorTerms: 'Security role: Service Desk > Tickets, Modify (time logs)', checkedBy: 'GET /v2/security/userinfo (UserAccessRights, CanModify)' },
    ],
    async checkPermissions(ctx) {
      await vendorSession(bmsProfile, ctx).grant();
      const info = await bmsGet<BmsRecord | null>(ctx, '/v2/security/userinfo');
      const rights = Array.isArray(info?.UserAccessRights) ? (info!.UserAccessRights as BmsRecord[]) : [];
      // The document does not name its menu ids, so any right that may modify counts; a system admin may do all.
      const modify = info?.IsUserSystemAdmin === true || rights.some((r) => r.CanModify === true);
      const detail = `${String(info?.FullName ?? 'the user')}: ${info?.IsUserSystemAdmin === true ? 'system administrator' : `${rights.filter((r) => r.CanModify === true).length} of ${rights.length} access rights may modify`}`;
      return [
        { id: 'api.access', ok: true, detail: 'signed in' },
        { id: 'tickets.modify', ok: modify, detail },
        { id: 'tickets.modify.update', ok: modify, detail },
        { id: 'tickets.modify.time', ok: modify, detail },
      ];
    },
  },
};
