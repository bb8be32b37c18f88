import type { ConnectorCapabilities } from '../capabilities';
import { grantedScopes, HALO_PAGE_SIZE } from './client';

/** The limited PSA connector of the interface document's rule 14. */
export const haloPsaCapabilities: ConnectorCapabilities = {
  writes: ['ticket.create', 'ticket.update', 'time.create', 'project.write', 'agreement.write'],
  commits: 'fixture_only',
  // Rule 14: contracts are synced so that line writes can run on the fixture agreements; no list.
  unlisted: ['agreements'],
  pageSize: HALO_PAGE_SIZE,
  credentials: ['clientId', 'clientSecret'],
  projectWrite: 'project_note',
  // Halo's ticket list has no note count; `lastactiondate` moves only when an action (a note) is added.
  bookkeepingFields: ['last_update', 'lastactiondate', 'alastupdate', 'ulastupdate', 'last_modified'],
  // HaloPSA publishes no limit we could confirm (docs/vendors.md): a conservative default, AIMD on a 429.
  budget: { requestsPerHour: 5_000, concurrent: 5 },
  notes: { counted: 'never', stampField: 'lastactiondate' },
  // The agent UI shares the API's origin (the connection base URL is the instance URL).
  recordUrl(base, record, id) {
    const root = base.href.replace(/\/$/, '');
    if (record === 'ticket') return `${root}/ticket?id=${encodeURIComponent(id)}`;
    if (record === 'company') return `${root}/customers?clientid=${encodeURIComponent(id)}`;
    return null;
  },
  connect: {
    title: 'HaloPSA',
    fields: [
      { name: 'clientId', label: 'Client ID', help: 'Configuration > Integrations > HaloPSA API > View Applications > your application (Client ID and Secret (Services) authentication).', secret: false },
      { name: 'clientSecret', label: 'Client secret', help: 'Shown once in HaloPSA when the application is created (Configuration > Integrations > HaloPSA API).', secret: true },
    ],
    baseUrl: { label: 'Resource server', placeholder: 'https://yourcompany.halopsa.com', help: 'Configuration > Integrations > HaloPSA API: the Resource Server URL (without /api).' },
    sandbox: { path: '/sandbox-vendors/halopsa', credentials: { clientId: 'sandbox', clientSecret: 'sandbox-secret' } },
    // The token is asked for with scope=all; HaloPSA's answer names the scopes the application may use
    // (`all`, or narrower ones such as read:tickets and edit:tickets).
    permissions: [
      { id: 'tickets.read', capability: 'read', vendorTerms: 'API application permissions: read:tickets (or all)', checkedBy: 'the scopes of the token HaloPSA issues' },
      { id: 'tickets.edit', capability: 'ticket.create', vendorTerms: 'API application permissions: edit:tickets (or all)', checkedBy: 'the scopes of the token HaloPSA issues' },
      { id: 'tickets.edit.update', capability: 'ticket.update', vendorTerms: 'API application permissions: edit:tickets (or all)', checkedBy: 'the scopes of the token HaloPSA issues' },
    ],
    async checkPermissions(ctx) {
      const scopes = await grantedScopes(ctx);
      const has = (s: string) => scopes.includes('all') || scopes.includes(s);
      const detail = `token scopes: ${scopes.join(' ') || 'none'}`;
      return [
        { id: 'tickets.read', ok: has('read:tickets'), detail },
        { id: 'tickets.edit', ok: has('edit:tickets'), detail },
        { id: 'tickets.edit.update', ok: has('edit:tickets'), detail },
      ];
    },
  },
};
