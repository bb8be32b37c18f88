/** Pax8's published limit in its simulator (PAX8_RATE_LIMIT): per partner, over a rolling minute, then 429. */
import { startStandalone } from '../kit';
import { createPax8Simulator, PAX8_RATE_LIMIT } from './simulator';
import { readPax8Fixtures } from './test-fixtures';

const sim = createPax8Simulator({
  clients: { one: { secret: 's1', instance: 'one' }, two: { secret: 's2', instance: 'two' } },
  rateLimit: { requests: 5, windowSeconds: 60 },
});
let server: { url: string; close: () => Promise<void> };

beforeAll(async () => {
  for (const i of ['one', 'two']) sim.seed(i, readPax8Fixtures());
  server = await startStandalone(sim);
});
afterAll(() => server.close());

async function tokenOf(clientId: string, clientSecret: string): Promise<string> {
  const res = await fetch(`${server.url}/v1/token`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_id: clientId, client_secret: clientSecret, audience: 'https://api.pax8.com', grant_type: 'client_credentials' }),
  });
  return ((await res.json()) as { access_token: string }).access_token;
}

const companies = (token: string) => fetch(`${server.url}/v1/companies?page=0&size=1`, { headers: { authorization: `Bearer ${token}` } });

test('the published figure: 1000 requests a minute', () => {
  expect(PAX8_RATE_LIMIT).toEqual({ requests: 1000, windowSeconds: 60 });
});

test('past the limit a partner gets 429 in Pax8\'s error body, without Retry-After; another partner does not', async () => {
  const one = await tokenOf('one', 's1');
  const two = await tokenOf('two', 's2');
  const statuses: number[] = [];
  for (let i = 0; i < 5; i++) statuses.push((await companies(one)).status);
  expect(statuses).toEqual([200, 200, 200, 200, 200]);

  const refused = await companies(one);
  expect(refused.status).toBe(429);
  expect(refused.headers.get('retry-after')).toBeNull();
  expect(await refused.json()).toMatchObject({ type: 'TOO_MANY_REQUESTS', status: 429, instance: '/v1/companies' });
  expect((await companies(two)).status).toBe(200);
  // A token is not a Partner API call: it is still issued.
  expect(await tokenOf('one', 's1')).toEqual(expect.any(String));
});
