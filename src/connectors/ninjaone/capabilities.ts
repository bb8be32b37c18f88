import type { ConnectorCapabilities } from '../capabilities';
import { checkNinjaOnePermissions, NINJAONE_PERMISSIONS } from './permissions';
import { NINJA_PAGE_SIZE } from './client';
import { osFamily } from './connector';

export const ninjaOneCapabilities: ConnectorCapabilities = {
  // Device deploy: run the catalogue's install script on a device (./writer.ts).
  writes: ['device.deploy'],
  commits: 'live',
  pageSize: NINJA_PAGE_SIZE,
  credentials: ['clientId', 'clientSecret'],
  // The refresh token of an authorisation by a NinjaOne user (authorization-code grant): a token with
  // user context, which script/run requires (client.ts). Without it the connection reads but cannot deploy.
  optionalCredentials: ['refreshToken'],
  projectWrite: null,
  bookkeepingFields: ['lastContact', 'lastUpdate'],
  // NinjaOne's v2 API publishes no limit we could confirm (docs/vendors.md): a conservative default, AIMD on a 429.
  budget: { requestsPerHour: 5_000, concurrent: 5 },
  notes: { counted: 'never' },
  deviceOs: (native) => osFamily(native.nodeClass),
  // The device dashboard on the instance's origin.
  recordUrl(base, record, id) {
    if (record !== 'device') return null;
    return `${base.href.replace(/\/$/, '')}/#/deviceDashboard/${encodeURIComponent(id)}/overview`;
  },
  connect: {
    title: 'NinjaOne',
    fields: [
      { name: 'clientId', label: 'Client ID', help: 'Administration > Apps > API > Client App IDs: your API application (a Web or API Services application).', secret: false },
      { name: 'clientSecret', label: 'Client secret', help: 'Shown once in NinjaOne when the client app is added (Administration > Apps > API).', secret: true },
    ],
    baseUrl: {
      label: 'Region', placeholder: 'https://app.ninjarmm.com', help: 'The address you sign in to NinjaOne at.',
      regions: [
        { label: 'United States (app.ninjarmm.com)', url: 'https://app.ninjarmm.com' },
        { label: 'United States 2 (us2.ninjarmm.com)', url: 'https://us2.ninjarmm.com' },
        { label: 'Canada (ca.ninjarmm.com)', url: 'https://ca.ninjarmm.com' },
        { label: 'Europe (eu.ninjarmm.com)', url: 'https://eu.ninjarmm.com' },
        { label: 'Oceania (oc.ninjarmm.com)', url: 'https://oc.ninjarmm.com' },
      ],
    },
    sandbox: { path: '/sandbox-vendors/ninjaone', credentials: { clientId: 'sandbox', clientSecret: 'sandbox-secret' } },
    permissions: NINJAONE_PERMISSIONS,
    checkPermissions: checkNinjaOnePermissions,
    oauth: {
      authorizePath: '/ws/oauth/authorize', tokenPath: '/ws/oauth/token',
      scopes: ['monitoring', 'management', 'control', 'offline_access'],
      refreshCredential: 'refreshToken', clientIdCredential: 'clientId', clientSecretCredential: 'clientSecret',
      label: 'Sign in at NinjaOne and approve',
      help: 'Script runs need a NinjaOne user\'s approval. In Administration > Apps > API, give your client app the Authorization Code grant, the scopes Monitoring, Management and Control, and the redirect URI {callback}.',
      capability: 'device.deploy',
    },
  },
};
