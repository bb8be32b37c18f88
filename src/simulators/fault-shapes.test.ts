/**
 * Injected faults (through each simulator's /_control/faults) answer in the simulated vendor's own
 * error shape, so a connector meets the bytes that vendor sends when it throttles or fails; and the
 * Pax8 token service takes the legacy audience its spec still lists.
 */
import { createAutotaskSimulator } from './autotask/simulator';
import { createConnectWiseSimulator } from './connectwise/simulator';
import { createHaloPsaSimulator } from './halopsa/simulator';
import { startStandalone, type VendorSimulator } from './kit';
import { createNinjaOneSimulator } from './ninjaone/simulator';
import { createPax8Simulator } from './pax8/simulator';
import { createKaseyaBmsSimulator } from './kaseyabms/simulator';

const CONTROL = 'control-token';

interface Case {
  make: () => VendorSimulator;
  /** A vendor API path below the mount. */
  path: string;
  /** The vendor's error body for an injected fault of `status`. */
  shape: (status: number, path: string) => unknown;
}

const CASES: Record<string, Case> = {
  connectwise: {
    make: () => createConnectWiseSimulator({ controlToken: CONTROL }),
    path: '/v4_6_release/apis/3.0/service/tickets',
    shape: () => ({ code: expect.any(String), message: expect.any(String) }),
  },
  autotask: {
    make: () => createAutotaskSimulator({ controlToken: CONTROL }),
    path: '/atservicesrest/v1.0/Tickets/query',
    shape: () => ({ errors: [expect.any(String)] }),
  },
  halopsa: {
    make: () => createHaloPsaSimulator({ controlToken: CONTROL }),
    path: '/api/Tickets',
    // Halo answers a refusal with its message as a JSON string (src/simulators/halopsa/errors.ts).
    shape: () => expect.any(String),
  },
  ninjaone: {
    make: () => createNinjaOneSimulator({ controlToken: CONTROL }),
    path: '/v2/devices',
    shape: () => ({ error: expect.any(String), error_description: expect.any(String) }),
  },
  pax8: {
    make: () => createPax8Simulator({ controlToken: CONTROL }),
    path: '/v1/companies',
    shape: (status, path) => ({ type: expect.any(String), message: expect.any(String), instance: path, status, details: [] }),
  },
  kaseyabms: {
    make: () => createKaseyaBmsSimulator({ controlToken: CONTROL }),
    path: '/v2/servicedesk/tickets',
    // BMS API 2.0's envelope (ErrorInfo), with the fault's own status.
    shape: (status) => ({ Success: false, Error: { Code: status, Message: expect.any(String), Details: null, StackStrace: null, SubErrors: [] }, Result: null }),
  },
};

describe.each(Object.entries(CASES))('%s: an injected fault', (_vendor, c) => {
  let server: { url: string; close: () => Promise<void> };
  beforeAll(async () => {
    server = await startStandalone(c.make());
  });
  afterAll(() => server.close());

  async function inject(spec: Record<string, unknown>): Promise<void> {
    const res = await fetch(`${server.url}/_control/faults`, {
      method: 'POST',
      headers: { authorization: `Bearer ${CONTROL}`, 'content-type': 'application/json' },
      body: JSON.stringify(spec),
    });
    expect(res.status).toBe(204);
  }

  it.each([429, 503, 500])('answers %i in the vendor\'s error shape', async (status) => {
    await inject({ status, times: 1, retryAfterSeconds: status === 429 ? 7 : undefined, pathIncludes: c.path.split('/').pop() });
    const res = await fetch(`${server.url}${c.path}`);
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/json/);
    if (status === 429) expect(res.headers.get('retry-after')).toBe('7');
    expect(await res.json()).toEqual(c.shape(status, c.path));
  });
});

describe('Pax8 token audiences', () => {
  let server: { url: string; close: () => Promise<void> };
  beforeAll(async () => {
    server = await startStandalone(createPax8Simulator());
  });
  afterAll(() => server.close());

  const token = (audience: string) => fetch(`${server.url}/v1/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_id: 'sandbox', client_secret: 'sandbox-secret', audience, grant_type: 'client_credentials' }),
  });

  it('accepts the current and the legacy audience, and refuses any other', async () => {
    expect((await token('https://api.pax8.com')).status).toBe(200);
    const legacy = await token('api://p8p.client');
    expect(legacy.status).toBe(200);
    const issued = (await legacy.json()) as { access_token: string };
    const companies = await fetch(`${server.url}/v1/companies`, { headers: { authorization: `Bearer ${issued.access_token}` } });
    expect(companies.status).toBe(200);
    expect((await token('api://other')).status).toBe(403);
  });
});
