/**
 * One request authenticator for every surface (docs/architecture.md, Tenancy, keys and grants): REST,
 * MCP and GraphQL share the key lookup, the failed-authentication limit per client address and the
 * per-key limit with its headers. Failures past the per-address limit answer 429 on every surface, while
 * a valid key (or the admin token) from the same address is still served; a key past its limit answers
 * 429 on MCP and GraphQL as on REST. A path that cannot be percent-decoded is authenticated first (401
 * without a valid key), then 404 `not_found`. Each scenario connects from its own loopback address, so
 * the per-address counters of one do not touch another.
 */
import { Agent, fetch as undiciFetch } from 'undici';
import { startTestService, type TestService } from './support/service';

const PER_KEY = 5;
const FAILURES = 3;
let svc: TestService;
let isvId: string;
beforeAll(async () => {
  svc = await startTestService({}, { env: { RATE_LIMIT_PER_MINUTE: String(PER_KEY), AUTH_FAILURES_PER_MINUTE: String(FAILURES) } });
  isvId = (await svc.graphql('{ isvs { isvs { id name } } }')).data.isvs.isvs[0].id;
}, 120_000);
afterAll(async () => { await svc?.close(); });

let nextAddress = 10;
/** A client whose connections come from an address of its own (127.0.0.x). */
function client(): typeof fetch {
  const dispatcher = new Agent({ localAddress: `127.0.0.${nextAddress++}` });
  return ((url: string, init: RequestInit = {}) => undiciFetch(url, { ...init, dispatcher } as never)) as unknown as typeof fetch;
}

/** A fresh key of the sandbox ISV (its own per-key window). */
async function freshKey(): Promise<string> {
  return (await svc.graphql('mutation($id: ID!) { issue_api_key(isv_id: $id, label: "gate") { key } }', { id: isvId })).data.issue_api_key.key;
}

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
const listTickets = () => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_tickets', arguments: { tenant_id: svc.alphaId, limit: 1 } } });
const graphTickets = () => JSON.stringify({ query: 'query($t: ID!) { list_tickets(tenant_id: $t, limit: 1) { __typename } }', variables: { t: svc.alphaId } });

type Send = (f: typeof fetch, credentials: Record<string, string>) => Promise<Response>;
const SURFACES: [string, Send, Record<string, string>, Record<string, string>][] = [
  ['REST', (f, c) => f(`${svc.url}/tenants/${svc.alphaId}/tickets?limit=1`, { headers: c }), { 'x-api-key': 'sk_live_guess' }, {}],
  ['MCP', (f, c) => f(`${svc.url}/`, { method: 'POST', headers: { ...MCP_HEADERS, ...c }, body: listTickets() }), { 'x-api-key': 'sk_live_guess' }, {}],
  ['GraphQL with an API key', (f, c) => f(`${svc.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...c }, body: graphTickets() }), { 'x-api-key': 'sk_live_guess' }, {}],
  ['GraphQL with the admin token', (f, c) => f(`${svc.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', ...c }, body: graphTickets() }), { authorization: 'Bearer adm_guess' }, {}],
];

describe('failed authentications per address', () => {
  it.each(SURFACES)('%s: past the limit a failure is 429 with Retry-After, and a valid key from the same address is still served', async (surface, send, bad) => {
    const f = client();
    for (let i = 0; i < FAILURES; i++) {
      const res = await send(f, { ...Object.fromEntries(Object.entries(bad).map(([k, v]) => [k, `${v}_${i}`])) });
      expect([surface, i, res.status]).toEqual([surface, i, 401]);
    }
    const over = await send(f, bad);
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await over.json()) as { code: string }).code).toBe('rate_limited');
    // No key at all from that address is a failure too.
    expect((await send(f, {})).status).toBe(429);

    // A valid credential from the very same address gets in, on this surface and the others.
    const valid: Record<string, string> = surface === 'GraphQL with the admin token' ? { authorization: `Bearer ${svc.config.adminToken}` } : { 'x-api-key': await freshKey() };
    const ok = await send(f, valid);
    expect([surface, ok.status]).toEqual([surface, 200]);
    const body = (await ok.json()) as Record<string, any>;
    if (surface === 'MCP') expect(body.result.isError).toBeUndefined();
    if (surface.startsWith('GraphQL')) expect(body).toEqual({ data: { list_tickets: { __typename: expect.any(String) } } });
    expect((await f(`${svc.url}/tenants`, { headers: { 'x-api-key': await freshKey() } })).status).toBe(200);
    // And guessing from there is still refused.
    expect((await send(f, bad)).status).toBe(429);
  });

  it('failures on one surface count toward the limit of every surface (one counter per address)', async () => {
    const f = client();
    const [, rest] = SURFACES[0];
    const [, mcp] = SURFACES[1];
    const [, graph] = SURFACES[2];
    expect((await rest(f, { 'x-api-key': 'sk_live_a' })).status).toBe(401);
    expect((await mcp(f, { 'x-api-key': 'sk_live_b' })).status).toBe(401);
    expect((await graph(f, { 'x-api-key': 'sk_live_c' })).status).toBe(401);
    for (const send of [rest, mcp, graph]) expect((await send(f, { 'x-api-key': 'sk_live_d' })).status).toBe(429);
  });
});

describe('the per-key limit', () => {
  it.each(SURFACES.slice(0, 3))('%s: every answer carries the RateLimit headers; past the limit the key gets 429 with Retry-After', async (surface, send) => {
    const key = await freshKey();
    const f = client();
    const remaining: number[] = [];
    for (let i = 0; i < PER_KEY; i++) {
      const res = await send(f, { 'x-api-key': key });
      expect([surface, i, res.status]).toEqual([surface, i, 200]);
      expect(res.headers.get('ratelimit-limit')).toBe(String(PER_KEY));
      expect(Number(res.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
      remaining.push(Number(res.headers.get('ratelimit-remaining')));
      await res.arrayBuffer();
    }
    expect(remaining).toEqual([4, 3, 2, 1, 0]);
    const over = await send(f, { 'x-api-key': key });
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await over.json()) as { code: string }).code).toBe('rate_limited');
    // Another key from the same address is not limited by this one.
    expect((await send(f, { 'x-api-key': await freshKey() })).status).toBe(200);
  });

  it('the admin token has no per-key limit (internal tooling)', async () => {
    const f = client();
    for (let i = 0; i < PER_KEY + 2; i++) {
      expect((await SURFACES[3][1](f, { authorization: `Bearer ${svc.config.adminToken}` })).status).toBe(200);
    }
  });
});

describe('a path that cannot be percent-decoded', () => {
  const PATHS = ['/tenants/%ZZ/tickets', '/tenants/%/tickets', '/tenants/%FF/tickets', '/tenants/%C0%AE/tickets', '/tenants/x/tickets/%E0%A4%A'];

  it.each(PATHS)('%s: 401 without a valid key, 404 not_found with one, never a 422', async (path) => {
    const f = client();
    const none = await f(`${svc.url}${path}`);
    expect(none.status).toBe(401);
    expect(((await none.json()) as { code: string }).code).toBe('unauthenticated');
    const unknown = await f(`${svc.url}${path}`, { headers: { 'x-api-key': 'sk_live_unknown' } });
    expect(unknown.status).toBe(401);
    const key = await freshKey();
    for (const method of ['GET', 'POST']) {
      const res = await f(`${svc.url}${path}`, {
        method, headers: { 'x-api-key': key, ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) }, body: method === 'POST' ? '{}' : undefined,
      });
      expect([path, method, res.status]).toEqual([path, method, 404]);
      expect(await res.json()).toMatchObject({ code: 'not_found', status: 404 });
    }
  });
});
