import { checkBaseUrl, checkCredentials, deriveStatusMapping, testConnection, unmappedStatuses, type VendorStatus } from './connection-checks';
import { ServiceError } from '../errors/service-error';
import { startStandalone } from '../simulators/kit';
import { createAutotaskSimulator } from '../simulators/autotask/simulator';

const s = (name: string, board: string, sortOrder: number, closed = false): VendorStatus => ({ name, board, sortOrder, closed });

describe('deriveStatusMapping', () => {
  it('maps closed flags to closed, the first open status of each board to new, other open ones to in_progress', () => {
    const statuses = [
      s('In Progress', '1', 1), s('New', '1', 0), s('Closed', '1', 5, true),
      s('Open', '2', 0), s('New', '2', 1), s('Done', '2', 2, true),
      s('Done', '3', 0), // open on one board, closed on another: closed wins
    ];
    expect(deriveStatusMapping(statuses)).toEqual({ New: 'new', 'In Progress': 'in_progress', Closed: 'closed', Open: 'new', Done: 'closed' });
    expect(unmappedStatuses(statuses, deriveStatusMapping(statuses))).toEqual([]);
  });

  it('reports open statuses a given mapping leaves out, not the closed-flagged ones', () => {
    const statuses = [s('New', '1', 0), s('Waiting', '1', 1), s('Waiting', '2', 1), s('Closed', '1', 2, true)];
    expect(unmappedStatuses(statuses, { New: 'new' })).toEqual(['Waiting']);
  });
});

describe('checkCredentials', () => {
  it('trims, and refuses empty, missing and foreign names', () => {
    const ok = { companyId: ' acme ', publicKey: 'p', privateKey: 'k', clientId: 'c' };
    expect(checkCredentials('connectwise', ok)).toEqual({ companyId: 'acme', publicKey: 'p', privateKey: 'k', clientId: 'c' });
    expect(() => checkCredentials('connectwise', { ...ok, privateKey: ' ' })).toThrow(/privateKey/);
    expect(() => checkCredentials('connectwise', { ...ok, clientId: null })).toThrow(/clientId/);
    expect(() => checkCredentials('connectwise', { ...ok, clientSecret: 'x' })).toThrow(/not clientSecret/);
  });
});

describe('checkBaseUrl', () => {
  const publicDns = async () => [{ address: '93.184.216.34', family: 4 as const }];
  it('admits a public https URL without its trailing slash and refuses the rest', async () => {
    await expect(checkBaseUrl('https://api.example.com/v1/', { allowLoopback: false, resolve: publicDns })).resolves.toBe('https://api.example.com/v1');
    for (const bad of ['nope', 'ftp://api.example.com', 'http://api.example.com/v1', 'https://10.1.2.3/api', 'https://u:p@api.example.com', 'https://api.example.com/v1?x=1']) {
      await expect(checkBaseUrl(bad, { allowLoopback: false, resolve: publicDns })).rejects.toMatchObject({ code: 'validation', extras: { details: { field: 'base_url' } } });
    }
  });

  it('admits the server\'s own simulators under their prefix', async () => {
    await expect(checkBaseUrl('http://127.0.0.1:4000/sandbox-vendors/x/api', { allowLoopback: false, fixturePrefix: 'http://127.0.0.1:4000/sandbox-vendors/' })).resolves.toBe('http://127.0.0.1:4000/sandbox-vendors/x/api');
    await expect(checkBaseUrl('http://127.0.0.1:4000/sandbox-vendors/../admin', { allowLoopback: false, fixturePrefix: 'http://127.0.0.1:4000/sandbox-vendors/' })).rejects.toMatchObject({ code: 'validation' });
    await expect(checkBaseUrl('http://127.0.0.1:4000/other', { allowLoopback: false, fixturePrefix: 'http://127.0.0.1:4000/sandbox-vendors/' })).rejects.toMatchObject({ code: 'validation' });
  });
});

describe('optional credentials and the Autotask zone', () => {
  it('keeps a NinjaOne refresh token (optional) and still refuses foreign names', () => {
    expect(checkCredentials('ninjaone', { clientId: 'a', clientSecret: 'b', refreshToken: ' r ' })).toEqual({ clientId: 'a', clientSecret: 'b', refreshToken: 'r' });
    expect(checkCredentials('ninjaone', { clientId: 'a', clientSecret: 'b' })).toEqual({ clientId: 'a', clientSecret: 'b' });
    expect(() => checkCredentials('ninjaone', { clientId: 'a', clientSecret: 'b', password: 'x' })).toThrow(/not password/);
  });

  it('a connection test on a base URL outside the API user\'s Autotask zone is a 422 on base_url naming the zone\'s URL', async () => {
    const sim = createAutotaskSimulator({ zone: { zoneName: 'America East 3', url: 'https://webservices14.autotask.net/ATServicesRest/' } });
    const server = await startStandalone(sim);
    try {
      const err = await testConnection('autotask', `${server.url}/atservicesrest/v1.0`, { username: 'sandbox', secret: 'sandbox-secret', integrationCode: 'SANDBOX' })
        .then(() => null, (e: unknown) => e as ServiceError);
      expect(err).toBeInstanceOf(ServiceError);
      expect(err!.code).toBe('validation');
      expect(err!.message).toContain('base_url must be https://webservices14.autotask.net/ATServicesRest/v1.0');
      expect(err!.extras.details).toMatchObject({ field: 'base_url' });
    } finally {
      await server.close();
    }
  });
});
