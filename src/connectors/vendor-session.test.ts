/**
 * The vendor session (vendor-session.ts) over real loopback HTTP: each auth kind's token request, the
 * one token per connection asked for once however many callers wait, one renewal rule, a 401 renewed and
 * resent once (reads and writes), every paging style and how each fails where a vendor does not move on,
 * and the throttling signals a profile declares.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { VendorHttpClient, VendorHttpError } from './vendor-http';
import { clearSessionTokens, linkNext, renewAt, vendorSession, type Paging, type SessionContext, type VendorProfile } from './vendor-session';
import { onCredentialRotated } from './credential-rotation';

interface Seen { method: string; path: string; query: URLSearchParams; headers: http.IncomingHttpHeaders; body: string }
/** `wait`: the answer is held until it settles (a token request still under way). */
type Handler = (req: Seen) => { status?: number; body?: unknown; headers?: Record<string, string>; wait?: Promise<void> };

let server: http.Server;
let base: string;
let seen: Seen[] = [];
let handler: Handler = () => ({ status: 404 });

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      const u = new URL(req.url ?? '/', 'http://x');
      const s: Seen = { method: req.method ?? 'GET', path: u.pathname, query: u.searchParams, headers: req.headers, body };
      seen.push(s);
      const out = handler(s);
      void Promise.resolve(out.wait).then(() => {
        res.writeHead(out.status ?? 200, { 'content-type': 'application/json', ...out.headers });
        res.end(out.body === undefined ? '' : JSON.stringify(out.body));
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => { server.closeAllConnections(); await new Promise((r) => server.close(r)); });

const NOW = Date.UTC(2026, 0, 5, 12, 0, 0);
let now = NOW;
beforeEach(() => {
  seen = [];
  clearSessionTokens();
  now = NOW;
  jest.spyOn(Date, 'now').mockImplementation(() => now);
});
afterEach(() => jest.restoreAllMocks());

const http0 = () => new VendorHttpClient({ timeoutMs: 10_000, maxRetries: 2, sleep: async () => undefined });
const ctxOf = (credentials: Record<string, string>): SessionContext => ({ baseUrl: `${base}/api`, credentials, http: http0() });
const calls = (path: string) => seen.filter((s) => s.path === path);

const clientCredentials: VendorProfile = {
  connector: 'acme',
  auth: { kind: 'oauth-client-credentials', tokenUrl: '/token', extra: { scope: 'all' }, defaultLifetimeS: 3600 },
};

/** A token server that numbers its tokens, and an API that takes only the newest one (or refuses all). */
function tokenVendor(opts: { refuseAll?: boolean; lifetimeS?: number } = {}): Handler {
  let issued = 0;
  return (r) => {
    if (r.path === '/api/token') { issued += 1; return { body: { access_token: `t${issued}`, expires_in: opts.lifetimeS ?? 3600 } }; }
    if (opts.refuseAll || r.headers.authorization !== `Bearer t${issued}`) return { status: 401, body: { error: 'invalid_token' } };
    return { body: { ok: true, method: r.method, sent: r.body } };
  };
}

/** The session's one token is kept until `renewMs` after the fixed clock's start and renewed there, once. */
async function expectRenewedAt(s: { get(path: string): Promise<unknown> }, renewMs: number): Promise<void> {
  now = NOW + renewMs - 1_000;
  await s.get('/before-renewal');
  expect(calls('/api/token')).toHaveLength(1);
  now = NOW + renewMs;
  await s.get('/at-renewal');
  expect(calls('/api/token')).toHaveLength(2);
}

describe('tokens', () => {
  it('one renewal rule: a minute before expiry, or a tenth of the life when that is shorter', () => {
    expect(renewAt(3600, 0)).toBe(3_540_000);
    expect(renewAt(100 * 3600, 0)).toBe(100 * 3_600_000 - 60_000);
    expect(renewAt(300, 0)).toBe(270_000);
  });

  it('asks for one token however many calls wait, sends the grant as a form, and keeps it until its renewal time', async () => {
    handler = tokenVendor({ lifetimeS: 3600 });
    const s = vendorSession(clientCredentials, ctxOf({ clientId: 'id', clientSecret: 'secret' }));
    await Promise.all([s.get('/a'), s.get('/b'), s.get('/c')]);
    expect(calls('/api/token')).toHaveLength(1);
    expect(Object.fromEntries(new URLSearchParams(calls('/api/token')[0].body))).toEqual({ grant_type: 'client_credentials', client_id: 'id', client_secret: 'secret', scope: 'all' });
    await expectRenewedAt(s, 3_540_000);
  });

  it('a rotated secret does not reuse the token the old one earned', async () => {
    handler = tokenVendor();
    await vendorSession(clientCredentials, ctxOf({ clientId: 'id', clientSecret: 'one' })).get('/a');
    await vendorSession(clientCredentials, ctxOf({ clientId: 'id', clientSecret: 'two' })).get('/a');
    expect(calls('/api/token')).toHaveLength(2);
  });

  it('a 401 renews the token and resends once, for a read and for a write', async () => {
    handler = tokenVendor();
    const ctx = ctxOf({ clientId: 'id', clientSecret: 'secret' });
    const s = vendorSession(clientCredentials, ctx);
    await s.get('/warm');
    // Someone else asks for a token: the vendor takes only the newest, so ours is refused from now on.
    await ctx.http.request({ method: 'POST', url: `${base}/api/token`, form: {} });
    const body = await s.send<{ method: string; sent: string }>({ method: 'POST', path: '/things', json: { name: 'x' } });
    expect(body).toMatchObject({ method: 'POST', sent: '{"name":"x"}' });
    expect(calls('/api/things')).toHaveLength(2);
    expect(calls('/api/token')).toHaveLength(3);
    await ctx.http.request({ method: 'POST', url: `${base}/api/token`, form: {} });
    await expect(s.get('/read')).resolves.toMatchObject({ ok: true });
    expect(calls('/api/read')).toHaveLength(2);
  });

  it('a second 401 is the vendor\'s answer: thrown, not resent again', async () => {
    handler = tokenVendor({ refuseAll: true });
    const s = vendorSession(clientCredentials, ctxOf({ clientId: 'id', clientSecret: 'secret' }));
    await expect(s.get('/x')).rejects.toMatchObject({ status: 401 });
    expect(calls('/api/x')).toHaveLength(2);
    expect(calls('/api/token')).toHaveLength(2);
  });

  it('fixed headers are never renewed: a 401 is thrown at once', async () => {
    handler = () => ({ status: 401 });
    const s = vendorSession({ connector: 'acme', auth: { kind: 'headers', headers: (c) => ({ 'x-key': c.key }) } }, ctxOf({ key: 'k' }));
    await expect(s.get('/x')).rejects.toBeInstanceOf(VendorHttpError);
    expect(seen).toHaveLength(1);
    expect(seen[0].headers['x-key']).toBe('k');
  });

  it('basic auth from two credentials', async () => {
    handler = () => ({ body: [] });
    await vendorSession({ connector: 'acme', auth: { kind: 'basic', username: 'user', password: 'pass' } }, ctxOf({ user: 'u', pass: 'p' })).get('/x');
    expect(seen[0].headers.authorization).toBe(`Basic ${Buffer.from('u:p').toString('base64')}`);
  });

  it('a password grant with a fixed basic client, and a JSON grant', async () => {
    handler = tokenVendor();
    const pw: VendorProfile = { connector: 'acme', auth: { kind: 'password-grant', username: 'apiKey', password: 'apiSecret', tokenUrl: '/token', basicClient: { username: 'public-client', password: 'public' }, defaultLifetimeS: 3600 } };
    await vendorSession(pw, ctxOf({ apiKey: 'k', apiSecret: 's' })).get('/x');
    expect(calls('/api/token')[0].headers.authorization).toBe(`Basic ${Buffer.from('public-client:public').toString('base64')}`);
    expect(Object.fromEntries(new URLSearchParams(calls('/api/token')[0].body))).toEqual({ grant_type: 'password', username: 'k', password: 's' });
    seen = [];
    const json: VendorProfile = { connector: 'other', auth: { kind: 'oauth-client-credentials', tokenUrl: '/token', encoding: 'json', extra: { audience: 'aud' }, defaultLifetimeS: 60 } };
    await vendorSession(json, ctxOf({ clientId: 'i', clientSecret: 's' })).get('/x');
    expect(JSON.parse(calls('/api/token')[0].body)).toEqual({ grant_type: 'client_credentials', client_id: 'i', client_secret: 's', audience: 'aud' });
  });

  it('a grant sent as multipart/form-data, read back by the platform\'s own multipart parser', async () => {
    handler = tokenVendor();
    const multipart: VendorProfile = {
      connector: 'acme',
      auth: { kind: 'password-grant', username: 'user', password: 'pass', tokenUrl: '/token', encoding: 'multipart', clientless: true, paramNames: { grant_type: 'GrantType' }, defaultLifetimeS: 3600 },
    };
    await vendorSession(multipart, ctxOf({ user: 'u', pass: 'p "quoted"' })).get('/x');
    const token = calls('/api/token')[0];
    expect(token.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    const form = await new Response(token.body, { headers: { 'content-type': token.headers['content-type']! } }).formData();
    expect(Object.fromEntries(form)).toEqual({ GrantType: 'password', username: 'u', password: 'p "quoted"' });
  });

  it('a refresh token the vendor rotates is used from then on and announced once', async () => {
    let n = 0;
    handler = (r) => {
      if (r.path === '/api/token') { n += 1; return { body: { access_token: `a${n}`, refresh_token: `r${n + 1}`, expires_in: 3600 } }; }
      return { body: {} };
    };
    const rotations: string[] = [];
    const stop = onCredentialRotated((c) => { rotations.push(`${c.credential}:${c.previous}->${c.next}`); });
    const p: VendorProfile = { connector: 'acme', auth: { kind: 'oauth-refresh-token', tokenUrl: '/token', orClientCredentials: true, defaultLifetimeS: 3600 } };
    const ctx = ctxOf({ clientId: 'i', clientSecret: 's', refreshToken: 'r1' });
    await vendorSession(p, ctx).get('/x');
    now += 3_600_000;
    await vendorSession(p, ctx).get('/x');
    stop();
    const grants = calls('/api/token').map((t) => new URLSearchParams(t.body).get('refresh_token'));
    expect(grants).toEqual(['r1', 'r2']);
    expect(rotations).toEqual(['refreshToken:r1->r2', 'refreshToken:r2->r3']);
  });

  it('a JWT exchange: authenticate with the JWT, renew with the refresh token, authenticate again when the refresh is refused', async () => {
    let n = 0;
    let refreshWorks = true;
    handler = (r) => {
      const tokens = () => { n += 1; return { tokens: { access: { token: `a${n}`, expirySeconds: 3600 }, refresh: { token: `r${n}`, expirySeconds: 90_000 } } }; };
      if (r.path === '/api/auth/authenticate') return r.headers.authorization === 'Bearer user-jwt' ? { body: tokens() } : { status: 401 };
      if (r.path === '/api/auth/refresh') return refreshWorks && r.body === `r${n}` ? { body: tokens() } : { status: 401 };
      return r.headers.authorization === `Bearer a${n}` ? { body: {} } : { status: 401 };
    };
    const p: VendorProfile = {
      connector: 'acme',
      auth: {
        kind: 'jwt-exchange', authenticateUrl: '/auth/authenticate', refreshUrl: '/auth/refresh', refreshSend: 'text', defaultLifetimeS: 3600,
        answer: { access: 'tokens.access.token', expiresIn: 'tokens.access.expirySeconds', refresh: 'tokens.refresh.token', refreshExpiresIn: 'tokens.refresh.expirySeconds' },
      },
    };
    const ctx = ctxOf({ jwt: 'user-jwt' });
    await vendorSession(p, ctx).get('/devices');
    now += 3_600_000;
    await vendorSession(p, ctx).get('/devices');
    refreshWorks = false;
    now += 3_600_000;
    await vendorSession(p, ctx).get('/devices');
    expect(seen.map((r) => r.path)).toEqual([
      '/api/auth/authenticate', '/api/devices', '/api/auth/refresh', '/api/devices', '/api/auth/refresh', '/api/auth/authenticate', '/api/devices',
    ]);
  });

  it('a token request the vendor refuses is turned into the profile\'s error', async () => {
    handler = () => ({ status: 400, body: { error: 'invalid_grant' } });
    const p: VendorProfile = {
      connector: 'acme',
      auth: { kind: 'oauth-refresh-token', tokenUrl: '/token', defaultLifetimeS: 3600, refused: (err, grant) => new Error(`revoked ${grant} ${(err.body as { error: string }).error}`) },
    };
    await expect(vendorSession(p, ctxOf({ clientId: 'i', clientSecret: 's', refreshToken: 'r' })).get('/x')).rejects.toThrow('revoked refresh_token invalid_grant');
  });

  it('a failed token request is not kept: the next call asks again', async () => {
    let refuse = true;
    handler = (r) => {
      if (r.path === '/api/token') return refuse ? { status: 400, body: { error: 'invalid_client' } } : { body: { access_token: 't1', expires_in: 3600 } };
      return r.headers.authorization === 'Bearer t1' ? { body: { ok: true } } : { status: 401 };
    };
    const s = vendorSession(clientCredentials, ctxOf({ clientId: 'id', clientSecret: 'secret' }));
    await expect(Promise.all([s.get('/a'), s.get('/b')])).rejects.toMatchObject({ status: 400 });
    expect(calls('/api/token')).toHaveLength(1);
    refuse = false;
    await expect(s.get('/a')).resolves.toEqual({ ok: true });
    expect(calls('/api/token')).toHaveLength(2);
  });

  it('grant() while a renewal is under way sends no token request of its own (a refresh token may be single-use)', async () => {
    let release!: () => void;
    const answered = new Promise<void>((r) => { release = r; });
    let n = 0;
    handler = (r) => {
      if (r.path === '/api/token') { n += 1; return { wait: answered, body: { access_token: `a${n}`, refresh_token: `r${n + 1}`, expires_in: 3600, scope: 'monitoring management' } }; }
      return { body: { ok: true } };
    };
    const p: VendorProfile = { connector: 'acme', auth: { kind: 'oauth-refresh-token', tokenUrl: '/token', defaultLifetimeS: 3600 } };
    const ctx = ctxOf({ clientId: 'i', clientSecret: 's', refreshToken: 'r1' });
    const sync = vendorSession(p, ctx).get('/devices');
    for (let i = 0; i < 200 && calls('/api/token').length === 0; i += 1) await new Promise((r) => setTimeout(r, 5));
    expect(calls('/api/token')).toHaveLength(1);
    const granted = vendorSession(p, ctx).grant();
    // Time for a token request of the grant's own to reach the vendor, were it sent.
    await new Promise((r) => setTimeout(r, 50));
    release();
    await expect(sync).resolves.toEqual({ ok: true });
    await expect(granted).resolves.toMatchObject({ scope: 'monitoring management' });
    expect(calls('/api/token').map((t) => new URLSearchParams(t.body).get('refresh_token'))).toEqual(['r1']);
  });

  it('an expiry time without a zone is UTC, whatever the server\'s zone', async () => {
    // A server two hours east of UTC: Date.parse reads a date-time without a zone as local time.
    const parse = Date.parse;
    jest.spyOn(Date, 'parse').mockImplementation((t: string) => (/(Z|[+-]\d{2}:?\d{2})$/i.test(t) || !t.includes('T') ? parse(t) : parse(`${t}Z`) - 2 * 3_600_000));
    handler = (r) => (r.path === '/api/token'
      ? { body: { Result: { AccessToken: `t${calls('/api/token').length}`, AccessTokenExpireOn: '2026-01-05T13:00:00' } } }
      : { body: { ok: true } });
    const p: VendorProfile = {
      connector: 'acme',
      auth: { kind: 'oauth-client-credentials', tokenUrl: '/token', defaultLifetimeS: 60, answer: { access: 'Result.AccessToken', expiresAt: 'Result.AccessTokenExpireOn' } },
    };
    const s = vendorSession(p, ctxOf({ clientId: 'i', clientSecret: 's' }));
    await s.get('/a');
    // Expires at 13:00 UTC, an hour after the fixed clock's 12:00 UTC: renewed a minute before.
    await expectRenewedAt(s, 3_540_000);
  });
});

describe('throttling', () => {
  it('a write answered 429 is resent only where the profile says a 429 refuses before processing', async () => {
    let throttle = 1;
    handler = () => (throttle-- > 0 ? { status: 429, headers: { 'retry-after': '0' } } : { body: { id: 1 } });
    const plain: VendorProfile = { connector: 'acme', auth: { kind: 'none' } };
    await expect(vendorSession(plain, ctxOf({})).send({ method: 'POST', path: '/w', json: {} })).rejects.toMatchObject({ status: 429 });
    throttle = 1;
    seen = [];
    const resends: VendorProfile = { connector: 'acme', auth: { kind: 'none' }, throttling: { resendThrottledWrites: true } };
    await expect(vendorSession(resends, ctxOf({})).send({ method: 'POST', path: '/w', json: {} })).resolves.toEqual({ id: 1 });
    expect(seen).toHaveLength(2);
  });

  it('the vendor\'s documented waits replace the jittered backoff where no Retry-After is given', async () => {
    let throttle = 3;
    handler = () => (throttle-- > 0 ? { status: 429 } : { body: {} });
    const waits: number[] = [];
    const client = new VendorHttpClient({ timeoutMs: 10_000, maxRetries: 5, sleep: async (ms) => { waits.push(ms); } });
    const p: VendorProfile = { connector: 'acme', auth: { kind: 'none' }, throttling: { backoffMs: [2000, 5000] } };
    await vendorSession(p, { baseUrl: `${base}/api`, credentials: {}, http: client }).get('/x');
    expect(waits).toEqual([2000, 5000, 5000]);
  });

  it('a refusal inside a 2xx is thrown as the status it stands for, and a 401 in it renews the token', async () => {
    let issued = 0;
    handler = (r) => {
      if (r.path === '/api/token') { issued += 1; return { body: { access_token: `t${issued}`, expires_in: 3600 } }; }
      if (r.headers.authorization !== `Bearer t${issued}` || issued < 2) return { body: { Success: false, Error: 'token expired', Code: 401 } };
      return r.path === '/api/bad' ? { body: { Success: false, Error: 'Title is required', Code: 400 } } : { body: { Success: true, Result: 1 } };
    };
    const p: VendorProfile = {
      ...clientCredentials,
      errorInBody: (b) => { const e = b as { Success?: boolean; Error?: string; Code?: number }; return e?.Success === false ? { status: e.Code ?? 400, message: String(e.Error) } : null; },
    };
    const s = vendorSession(p, ctxOf({ clientId: 'i', clientSecret: 's' }));
    await expect(s.get('/ok')).resolves.toEqual({ Success: true, Result: 1 });
    expect(calls('/api/token')).toHaveLength(2);
    await expect(s.send({ method: 'POST', path: '/bad', json: {} })).rejects.toMatchObject({ status: 400, body: { Error: 'Title is required' } });
  });

  it('a pace runs before every request', async () => {
    handler = () => ({ body: {} });
    let paced = 0;
    const p: VendorProfile = { connector: 'acme', auth: { kind: 'none' }, throttling: { pace: async () => { paced += 1; } } };
    const s = vendorSession(p, ctxOf({}));
    await s.get('/a');
    await s.send({ method: 'PUT', path: '/b', json: {} });
    expect(paced).toBe(2);
  });
});

describe('paging', () => {
  const none: VendorProfile = { connector: 'acme', auth: { kind: 'none' } };
  const rows = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ id: from + i }));
  async function all(paging: Paging, first = { path: '/list' } as Parameters<ReturnType<typeof vendorSession>['pages']>[0]): Promise<number[][]> {
    const out: number[][] = [];
    for await (const page of vendorSession(none, ctxOf({})).pages<{ id: number }>(first, paging)) out.push(page.map((r) => r.id));
    return out;
  }

  it('Link header: follows rel="next" until there is none', async () => {
    expect(linkNext('<http://h/x?page=1>; rel="prev", <http://h/x?page=3>; rel="next"')).toBe('http://h/x?page=3');
    handler = (r) => {
      const page = Number(r.query.get('page'));
      return { body: rows(page * 10, 2), headers: page < 3 ? { link: `<${base}/api/list?page=${page + 1}&pageSize=2>; rel="next"` } : undefined };
    };
    expect(await all({ style: 'link-header', items: null }, { path: '/list', query: { page: 1, pageSize: 2 } })).toEqual([[10, 11], [20, 21], [30, 31]]);
  });

  it('a next-page link to another origin is refused, or rebased onto ours', async () => {
    handler = (r) => (r.query.get('p') ? { body: { items: [{ id: 2 }] } } : { body: { items: [{ id: 1 }], next: 'http://elsewhere.invalid/api/list?p=2' } });
    await expect(all({ style: 'next-url', items: 'items', next: 'next' })).rejects.toThrow(/leaves/);
    expect(await all({ style: 'next-url', items: 'items', next: 'next', offOrigin: 'rebase' })).toEqual([[1], [2]]);
  });

  it('next-page URL in the body, after a POST query, bounded by the total', async () => {
    handler = (r) => {
      const p = Number(r.query.get('p') ?? 1);
      return { body: { items: rows(p * 10, 2), pageDetails: { totalCount: 100, nextPageUrl: `${base}/api/list/next?p=${p + 1}` } } };
    };
    const pages = await all({ style: 'next-url', items: 'items', next: 'pageDetails.nextPageUrl', total: 'pageDetails.totalCount', pageSize: 50 }, { method: 'POST', path: '/list/query', json: { filter: [] }, read: true });
    expect(pages).toEqual([[10, 11], [20, 21], [30, 31]]);
    expect(seen.map((r) => r.method)).toEqual(['POST', 'GET', 'GET']);
  });

  it('a next-page URL that repeats fails instead of looping', async () => {
    handler = () => ({ body: { items: [{ id: 1 }], next: `${base}/api/list?p=2` } });
    await expect(all({ style: 'next-url', items: 'items', next: 'next' })).rejects.toThrow(/repeats/);
  });

  it('page number and size from 1, until a short page; from 0 until totalPages', async () => {
    handler = (r) => ({ body: { list: rows(Number(r.query.get('page_no')) * 10, Number(r.query.get('page_no')) < 3 ? 2 : 1) } });
    expect(await all({ style: 'page-number', items: 'list', page: 'page_no', size: 'page_size', pageSize: 2, first: 1 })).toEqual([[10, 11], [20, 21], [30]]);
    expect(seen.map((r) => r.query.get('page_size'))).toEqual(['2', '2', '2']);
    seen = [];
    handler = (r) => ({ body: { content: rows(Number(r.query.get('page')) * 10, 2), page: { totalPages: 2 } } });
    expect(await all({ style: 'page-number', items: 'content', page: 'page', size: 'size', pageSize: 2, first: 0, totalPages: 'page.totalPages' })).toEqual([[0, 1], [10, 11]]);
  });

  it('offset and size until the total', async () => {
    handler = (r) => ({ body: { data: rows(Number(r.query.get('offset')), 2), total: 5 } });
    expect(await all({ style: 'offset', items: 'data', offset: 'offset', size: 'limit', pageSize: 2, total: 'total' })).toEqual([[0, 1], [2, 3], [4, 5]]);
  });

  it('after the last id, until a short page; an id that does not move fails', async () => {
    handler = (r) => { const after = Number(r.query.get('after') ?? 0); return { body: rows(after + 1, after < 4 ? 2 : 1) }; };
    expect(await all({ style: 'after-id', items: null, after: 'after', size: 'pageSize', pageSize: 2, id: 'id' })).toEqual([[1, 2], [3, 4], [5]]);
    handler = () => ({ body: rows(1, 2) });
    await expect(all({ style: 'after-id', items: null, after: 'after', size: 'pageSize', pageSize: 2, id: 'id' })).rejects.toThrow(/did not advance/);
  });

  it('older than the smallest id, downwards', async () => {
    handler = (r) => { const older = Number(r.query.get('olderThan') ?? 7); return { body: { activities: rows(older - 2, 2).reverse().filter((x) => x.id > 0) } }; };
    expect(await all({ style: 'after-id', items: 'activities', after: 'olderThan', size: 'pageSize', pageSize: 2, id: 'id', down: true })).toEqual([[6, 5], [4, 3], [2, 1]]);
  });

  it('a server cursor until a short page; a cursor offset that does not move fails', async () => {
    handler = (r) => { const c = Number(r.query.get('cursor') ?? 0); return { body: { results: rows(c * 10, c < 2 ? 2 : 1), cursor: { name: String(c + 1), offset: c * 2 } } }; };
    expect(await all({ style: 'cursor', items: 'results', param: 'cursor', size: 'pageSize', pageSize: 2, cursor: 'cursor.name', offset: 'cursor.offset' })).toEqual([[0, 1], [10, 11], [20]]);
    handler = (r) => ({ body: { results: rows(0, 2), cursor: { name: `c${r.query.get('cursor') ?? ''}x`, offset: 0 } } });
    await expect(all({ style: 'cursor', items: 'results', param: 'cursor', size: 'pageSize', pageSize: 2, cursor: 'cursor.name', offset: 'cursor.offset' })).rejects.toThrow(/did not advance/);
  });

  it('a cursor that comes back fails, offset or not', async () => {
    handler = () => ({ body: { results: rows(0, 2), cursor: { name: 'same' } } });
    await expect(all({ style: 'cursor', items: 'results', param: 'cursor', size: 'pageSize', pageSize: 2, cursor: 'cursor.name', maxPages: 50 })).rejects.toThrow(/acme GET \/list: cursor did not advance/);
    expect(seen).toHaveLength(2);
  });

  it('a numbered page that repeats one already read fails (the vendor ignores the page parameter and sends no totals)', async () => {
    handler = () => ({ body: { list: rows(1, 2) } });
    await expect(all({ style: 'page-number', items: 'list', page: 'page', size: 'size', pageSize: 2, first: 1, maxPages: 50 })).rejects.toThrow(/acme GET \/list: page 2 repeats a page already read/);
    expect(seen).toHaveLength(2);
    seen = [];
    // A vendor that comes back to its first page after the last.
    handler = (r) => ({ body: { list: rows((Number(r.query.get('offset')) / 2) % 3, 2) } });
    await expect(all({ style: 'offset', items: 'list', offset: 'offset', size: 'limit', pageSize: 2, maxPages: 50 })).rejects.toThrow(/page 4 repeats/);
    expect(seen).toHaveLength(4);
  });

  it('an empty page that still carries a next link is followed to the rows after it', async () => {
    handler = (r) => {
      const p = Number(r.query.get('p') ?? 1);
      const next = p < 3 ? `${base}/api/list?p=${p + 1}` : null;
      return { body: { items: p === 2 ? [] : rows(p * 10, 2), next }, headers: next ? { link: `<${next}>; rel="next"` } : undefined };
    };
    expect(await all({ style: 'next-url', items: 'items', next: 'next' })).toEqual([[10, 11], [30, 31]]);
    seen = [];
    expect(await all({ style: 'link-header', items: 'items' })).toEqual([[10, 11], [30, 31]]);
    expect(seen).toHaveLength(3);
  });

  it('rows that are no record are dropped, and the page still counts as full', async () => {
    handler = (r) => ({ body: Number(r.query.get('page')) === 1 ? [{ id: 1 }, null, 7, { id: 2 }] : [{ id: 3 }] });
    expect(await all({ style: 'page-number', items: null, page: 'page', size: 'size', pageSize: 4, first: 1 })).toEqual([[1, 2], [3]]);
  });

  it('stops at maxPages with the caller\'s error when more remain; a caller may stop early', async () => {
    handler = (r) => ({ body: rows(Number(r.query.get('page')) * 10, 2) });
    const paging: Paging = { style: 'page-number', items: null, page: 'page', size: 'size', pageSize: 2, first: 0, maxPages: 2, limitError: () => new Error('too many') };
    await expect(all(paging)).rejects.toThrow('too many');
    expect(seen).toHaveLength(2);
    seen = [];
    for await (const page of vendorSession(none, ctxOf({})).pages({ path: '/list' }, paging)) { expect(page).toHaveLength(2); break; }
    expect(seen).toHaveLength(1);
  });

  it('an answer without its list fails, naming the call', async () => {
    handler = () => ({ body: { other: [] } });
    await expect(all({ style: 'page-number', items: 'list', page: 'p', size: 's', pageSize: 2, first: 1 })).rejects.toThrow(/acme GET \/list answered without list/);
  });
});
