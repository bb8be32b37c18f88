import type { ConnectorCapabilities } from '../capabilities';
import { checkNcentralPermissions, NCENTRAL_PERMISSIONS } from './permissions';
import { NCENTRAL_PAGE_SIZE } from './client';
import { deviceOsFamily } from './connector';

export const ncentralCapabilities: ConnectorCapabilities = {
  writes: [],
  // N-central's REST API can run a repository item on a device (POST /api/scheduled-tasks/direct, "Task &
  // Job Management APIs"), but it lists no repository: a deploy's package could not be checked against a
  // catalogue, nor its operating systems against the device's, before anything runs.
  unsupported: {
    'device.deploy': "N-central's REST API runs a script or automation policy on a device only by its repository item id (POST /api/scheduled-tasks/direct) and documents no listing of the Script/Software Repository, so there is no catalogue of packages to check a deploy against",
  },
  commits: 'live',
  pageSize: NCENTRAL_PAGE_SIZE,
  // The N-central User-API Token (a JWT) of an API user: Administration > User Management > Users > the
  // user > API Access > Generate JSON Web Token ("Set up N-central REST API access").
  credentials: ['jwt'],
  projectWrite: null,
  // The agent moves its check-in time on every check-in: not a change to the device.
  bookkeepingFields: ['lastApplianceCheckinTime'],
  // N-central publishes no hourly rate, only per-endpoint limits of 3 to 50 requests in flight ("Rate
  // limiting"): never more than 3 at once (the lowest), at a steady pace the server's core engine bears.
  budget: { requestsPerHour: 7_200, concurrent: 3 },
  notes: { counted: 'never' },
  deviceOs: deviceOsFamily,
  // No link: the UI's deep links (deepLinkAction.do) take the customer id too and sign in with a user's
  // password, which the connection does not hold.
  recordUrl: () => null,
  connect: {
    title: 'N-central',
    fields: [
      { name: 'jwt', label: 'User-API Token (JWT)', help: 'Administration > User Management > Users: open the API user, then API Access > Generate JSON Web Token (the user needs MFA off; "API-only user" keeps it out of the UI).', secret: true },
    ],
    baseUrl: {
      label: 'N-central server', placeholder: 'https://ncentral.example.com',
      help: 'The address of your N-central server (the REST API is at /api on it, N-central 2023.9 or later).',
    },
    sandbox: { path: '/sandbox-vendors/ncentral', credentials: { jwt: 'sandbox-gamma-user-api-token' } },
    permissions: NCENTRAL_PERMISSIONS,
    checkPermissions: checkNcentralPermissions,
  },
};
