import { createHash } from 'node:crypto';
import { ninjaFixtures, useNinjaOneSimulator } from '../../../test/support/ninjaone-simulator';
import { softwareKey, type NinjaAlert, type NinjaDevice, type NinjaOsPatch, type NinjaSoftware } from './types';

const { sim, url: simUrl } = useNinjaOneSimulator();
const { alpha, beta } = ninjaFixtures;

/** A token with a user's context: the refresh_token grant of the client's authorisation (script/run needs one). */
async function userToken(): Promise<string> {
  const res = await fetch(`${simUrl()}/ws/oauth/token`, {
    method: 'POST',
    body: new URLSearchParams({ grant_type: 'refresh_token', client_id: 'sandbox', client_secret: 'sandbox-secret', refresh_token: 'sandbox-refresh-token' }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

async function token(clientId = 'sandbox', clientSecret = 'sandbox-secret'): Promise<string> {
  const res = await fetch(`${simUrl()}/ws/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret, scope: 'monitoring management control' }),
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { access_token: string; token_type: string; expires_in: number };
  expect(body.token_type).toBe('Bearer');
  expect(body.expires_in).toBeGreaterThan(0);
  return body.access_token;
}

async function get<T>(bearer: string, path: string, query: Record<string, string | number> = {}): Promise<{ status: number; body: T }> {
  const u = new URL(`${simUrl()}${path}`);
  for (const [k, v] of Object.entries(query)) u.searchParams.set(k, String(v));
  const res = await fetch(u, { headers: { authorization: `Bearer ${bearer}` } });
  return { status: res.status, body: (await res.json()) as T };
}

/** Pages through an `after`-paged list, returning each page. Bounded by the record count. */
async function pagesAfter<T extends { id: number }>(bearer: string, path: string, pageSize: number, extra: Record<string, string> = {}): Promise<T[][]> {
  const pages: T[][] = [];
  let after = 0;
  for (let i = 0; i < 1000; i++) {
    const { status, body } = await get<T[]>(bearer, path, { pageSize, after, ...extra });
    expect(status).toBe(200);
    if (body.length) pages.push(body);
    if (body.length < pageSize) return pages;
    after = body[body.length - 1].id;
  }
  throw new Error('paging did not end');
}

interface Report<T> {
  cursor: { name: string; offset: number; count: number; expires: number };
  results: T[];
}

async function reportPages<T>(bearer: string, path: string, pageSize: number, extra: Record<string, string> = {}): Promise<Report<T>[]> {
  const pages: Report<T>[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 1000; i++) {
    const { status, body } = await get<Report<T>>(bearer, path, { pageSize, ...(cursor ? { cursor } : {}), ...extra });
    expect(status).toBe(200);
    pages.push(body);
    if (body.results.length === 0) return pages;
    cursor = body.cursor.name;
  }
  throw new Error('cursor paging did not end');
}

describe('NinjaOne simulator: authentication', () => {
  it('refuses the API without a valid bearer token, in NinjaOne error shape', async () => {
    const none = await fetch(`${simUrl()}/v2/devices`);
    expect(none.status).toBe(401);
    expect(await none.json()).toEqual({ error: 'not_authenticated', error_description: 'Invalid credentials', error_code: 10 });

    const forged = await get(`not-a-token`, '/v2/organizations');
    expect(forged.status).toBe(401);
  });

  it('refuses bad client credentials and unsupported grants at the token endpoint', async () => {
    const post = (form: Record<string, string>) => fetch(`${simUrl()}/ws/oauth/token`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form),
    });
    const wrongSecret = await post({ grant_type: 'client_credentials', client_id: 'sandbox', client_secret: 'nope', scope: 'monitoring' });
    expect(wrongSecret.status).toBe(401);
    expect(await wrongSecret.json()).toMatchObject({ error: 'invalid_client' });

    const unknownClient = await post({ grant_type: 'client_credentials', client_id: 'someone', client_secret: 'sandbox-secret' });
    expect(unknownClient.status).toBe(401);

    const password = await post({ grant_type: 'password', client_id: 'sandbox', client_secret: 'sandbox-secret' });
    expect(password.status).toBe(400);
    expect(await password.json()).toMatchObject({ error: 'unsupported_grant_type' });
  });

  it('stops accepting tokens once they are revoked', async () => {
    const t = await token();
    expect((await get(t, '/v2/organizations')).status).toBe(200);
    sim.expireTokens();
    expect((await get(t, '/v2/organizations')).status).toBe(401);
  });

  it('selects the dataset by client id', async () => {
    const a = await get<{ id: number; name: string }[]>(await token('sandbox'), '/v2/organizations');
    const b = await get<{ id: number; name: string }[]>(await token('sandbox-beta'), '/v2/organizations');
    expect(a.body.map((o) => o.name).sort()).toEqual((alpha.organizations as { name: string }[]).map((o) => o.name).sort());
    expect(b.body.map((o) => o.name).sort()).toEqual((beta.organizations as { name: string }[]).map((o) => o.name).sort());
    expect(a.body.map((o) => o.name)).not.toEqual(expect.arrayContaining([b.body[0].name]));
  });
});

describe('NinjaOne simulator: lists paged with after', () => {
  it('pages devices-detailed completely and without overlap, in id order', async () => {
    const pages = await pagesAfter<NinjaDevice>(await token(), '/v2/devices-detailed', 7);
    expect(pages.length).toBeGreaterThan(3);
    const ids = pages.flat().map((d) => d.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
    expect(ids).toEqual((alpha.devices as NinjaDevice[]).map((d) => d.id).sort((x, y) => x - y));
    expect(pages.flat().every((d) => typeof d.os?.name === 'string' && typeof d.lastUpdate === 'number')).toBe(true);
  });

  it('serves /v2/devices with the basic node fields only', async () => {
    const pages = await pagesAfter<Record<string, unknown> & { id: number }>(await token(), '/v2/devices', 10);
    const devices = pages.flat();
    expect(devices).toHaveLength(alpha.devices.length);
    const first = devices[0];
    expect(first).toMatchObject({ id: expect.any(Number), organizationId: expect.any(Number), nodeClass: expect.any(String), offline: expect.any(Boolean) });
    expect(first.os).toBeUndefined();
    expect(first.system).toBeUndefined();
  });

  it('pages organizations with after', async () => {
    const pages = await pagesAfter<{ id: number }>(await token(), '/v2/organizations', 4);
    expect(pages.map((p) => p.length)).toEqual([4, 4, 1]);
    expect(new Set(pages.flat().map((o) => o.id)).size).toBe(alpha.organizations.length);
  });

  it('applies the device filter and rejects one it cannot parse', async () => {
    const t = await token();
    const org1 = (await get<NinjaDevice[]>(t, '/v2/devices-detailed', { df: 'org = 1' })).body;
    expect(org1.length).toBeGreaterThan(0);
    expect(org1.every((d) => d.organizationId === 1)).toBe(true);

    const offline = (await get<NinjaDevice[]>(t, '/v2/devices', { df: 'offline' })).body;
    expect(offline.map((d) => d.id).sort()).toEqual((alpha.devices as NinjaDevice[]).filter((d) => d.offline).map((d) => d.id).sort());

    const servers = (await get<NinjaDevice[]>(t, '/v2/devices', { df: 'class in (WINDOWS_SERVER, LINUX_SERVER) AND online' })).body;
    expect(servers.length).toBeGreaterThan(0);
    expect(servers.every((d) => d.nodeClass.endsWith('_SERVER') && !d.offline)).toBe(true);

    const bad = await get<{ error: string }>(t, '/v2/devices', { df: 'colour = blue' });
    expect(bad.status).toBe(400);
  });

  it('gives one device by id and 404 for an unknown one', async () => {
    const t = await token();
    const one = alpha.devices[3] as NinjaDevice;
    expect((await get(t, `/v2/device/${one.id}`)).body).toEqual(one);
    expect((await get(t, '/v2/device/999999')).status).toBe(404);
  });

  it('pages 50,000 grown devices completely', async () => {
    sim.grow('load', 'devices', 50_000);
    const pages = await pagesAfter<{ id: number }>(await token('load', 'load-secret'), '/v2/devices', 5000);
    const ids = pages.flat().map((d) => d.id);
    expect(ids).toHaveLength(50_000);
    expect(new Set(ids).size).toBe(50_000);
  });
});

describe('NinjaOne simulator: report cursors', () => {
  it('pages the software report with its cursor, completely and disjointly', async () => {
    const pages = await reportPages<NinjaSoftware>(await token(), '/v2/queries/software', 50);
    const rows = pages.flatMap((p) => p.results);
    expect(rows.length).toBe(alpha.software.length);
    expect(new Set(rows.map(softwareKey)).size).toBe(rows.length);
    // One cursor for the whole walk; offsets move by the page counts.
    expect(new Set(pages.map((p) => p.cursor.name)).size).toBe(1);
    let expectedOffset = 0;
    for (const p of pages) {
      expect(p.cursor.offset).toBe(expectedOffset);
      expect(p.cursor.count).toBe(p.results.length);
      expectedOffset += p.results.length;
    }
  });

  it('rejects an unknown cursor', async () => {
    const res = await get<{ error: string }>(await token(), '/v2/queries/software', { cursor: 'no-such-cursor' });
    expect(res.status).toBe(400);
  });

  it('serves os-patches with their statuses and filters them by device', async () => {
    const t = await token();
    const rows = (await reportPages<NinjaOsPatch>(t, '/v2/queries/os-patches', 20)).flatMap((p) => p.results);
    expect(rows).toHaveLength(alpha['os-patches'].length);
    expect(rows.every((r) => ['MANUAL', 'APPROVED', 'FAILED', 'REJECTED'].includes(r.status))).toBe(true);

    const deviceId = rows[0].deviceId;
    const forOne = (await reportPages<NinjaOsPatch>(t, '/v2/queries/os-patches', 100, { df: `id = ${deviceId}` })).flatMap((p) => p.results);
    expect(forOne.length).toBe(rows.filter((r) => r.deviceId === deviceId).length);
    expect(forOne.every((r) => r.deviceId === deviceId)).toBe(true);
  });

  it('pages a grown software report of 20,000 rows', async () => {
    sim.grow('load', 'devices', 100);
    sim.grow('load', 'software', 20_000);
    const rows = (await reportPages<NinjaSoftware>(await token('load', 'load-secret'), '/v2/queries/software', 10_000)).flatMap((p) => p.results);
    expect(rows).toHaveLength(20_000);
    expect(new Set(rows.map(softwareKey)).size).toBe(20_000);
  });
});

describe('NinjaOne simulator: changes made as the MSP would', () => {
  it('takes a device offline and moves its lastUpdate', async () => {
    const t = await token();
    const before = (alpha.devices as NinjaDevice[]).find((d) => !d.offline)!;
    sim.update('sandbox-alpha', 'devices', before.id, { offline: true });
    const after = (await get<NinjaDevice>(t, `/v2/device/${before.id}`)).body;
    expect(after.offline).toBe(true);
    expect(after.lastUpdate!).toBeGreaterThan(before.lastUpdate!);
    // The fixture records are not touched by the change.
    expect(before.offline).toBe(false);
  });

  it('raises and clears alerts', async () => {
    const t = await token();
    const device = (alpha.devices as NinjaDevice[]).find((d) => !(alpha.alerts as { deviceId: number }[]).some((a) => a.deviceId === d.id))!;
    const raised = sim.raiseAlert('sandbox-alpha', device.id, 'Disk D: has less than 5% free space');
    let alerts = (await get<NinjaAlert[]>(t, '/v2/alerts')).body;
    expect(alerts).toHaveLength(alpha.alerts.length + 1);
    expect(alerts.find((a) => a.uid === raised.uid)).toMatchObject({ deviceId: device.id, message: 'Disk D: has less than 5% free space' });
    expect(sim.get('sandbox-alpha', 'devices', device.id)!.lastUpdate!).toBeGreaterThan(device.lastUpdate!);

    expect(sim.clearAlert('sandbox-alpha', raised.uid)).toBe(true);
    alerts = (await get<NinjaAlert[]>(t, '/v2/alerts')).body;
    expect(alerts.map((a) => a.uid)).not.toContain(raised.uid);
    expect(alerts).toHaveLength(alpha.alerts.length);
  });

  it('creates devices after the highest id and lists them', async () => {
    const created = sim.create('sandbox-alpha', 'devices', { organizationId: 1, systemName: 'HVD-WS099', nodeClass: 'WINDOWS_WORKSTATION' });
    const maxId = Math.max(...(alpha.devices as NinjaDevice[]).map((d) => d.id));
    expect(created.id).toBe(maxId + 1);
    const all = (await get<NinjaDevice[]>(await token(), '/v2/devices')).body;
    expect(all[all.length - 1]).toMatchObject({ id: created.id, systemName: 'HVD-WS099', offline: false });
  });
});

describe('NinjaOne simulator: faults', () => {
  it('answers injected throttling with Retry-After', async () => {
    const t = await token();
    sim.faults.inject({ status: 429, times: 1, retryAfterSeconds: 3, pathIncludes: '/v2/alerts' });
    const res = await fetch(`${simUrl()}/v2/alerts`, { headers: { authorization: `Bearer ${t}` } });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('3');
    expect((await get(t, '/v2/alerts')).status).toBe(200);
  });
});

describe('script catalogue, script runs and the activity log', () => {
  const run = async (bearer: string, device: number | string, body: unknown) => {
    const res = await fetch(`${simUrl()}/v2/device/${device}/script/run`, {
      method: 'POST', headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' }, body: JSON.stringify(body),
    });
    return { status: res.status, body: res.status === 204 ? null : await res.json() };
  };

  it('serves the catalogue per instance', async () => {
    const a = await get<{ id: number; operatingSystems: string[] }[]>(await token(), '/v2/automation/scripts');
    expect(a.status).toBe(200);
    expect(a.body.map((s) => s.id)).toEqual((alpha.scripts as { id: number }[]).map((s) => s.id));
    const b = await get<{ id: number }[]>(await token('sandbox-beta'), '/v2/automation/scripts');
    expect(b.body.map((s) => s.id)).toEqual((beta.scripts as { id: number }[]).map((s) => s.id));
  });

  it('refuses what NinjaOne refuses, in its error shape, and records no run', async () => {
    const t = await userToken();
    expect(await run('wrong', 102, { type: 'SCRIPT', id: 301 })).toMatchObject({ status: 401, body: { error: 'not_authenticated' } });
    expect(await run(t, 99999, { type: 'SCRIPT', id: 301 })).toMatchObject({ status: 404, body: { error: 'invalid_id' } });
    expect(await run(t, 102, { type: 'SCRIPT', id: 9999 })).toMatchObject({ status: 404, body: { error: 'invalid_id' } });
    expect(await run(t, 102, { type: 'SCRIPT' })).toMatchObject({ status: 400, body: { error: 'invalid_parameter' } });
    expect(await run(t, 102, { type: 'RUN', id: 301 })).toMatchObject({ status: 400 });
    expect(await run(t, 102, { type: 'SCRIPT', id: 301, runAs: 'root' })).toMatchObject({ status: 400 });
    expect(await run(t, 135, { type: 'SCRIPT', id: 301 })).toMatchObject({ status: 400 }); // a Windows script on Ubuntu
    expect(await run(t, 102, { type: 'SCRIPT', id: 306 })).toMatchObject({ status: 400 }); // inactive
    expect(sim.runs('sandbox-alpha')).toEqual([]);
  });

  it('runs at once on an online device (activities, installed software) and queues on an offline one', async () => {
    const t = await userToken();
    expect((await run(t, 102, { type: 'SCRIPT', id: 301, runAs: 'system' })).status).toBe(204);
    expect(sim.list('sandbox-alpha', 'software').some((s) => s.deviceId === 102 && s.name === '7-Zip')).toBe(true);
    const log = await get<{ activities: { statusCode: string; sourceName: string; activityType: string }[] }>(t, '/v2/device/102/activities', { activityType: 'ACTION' });
    expect(log.body.activities.map((a) => [a.statusCode, a.sourceName])).toEqual([['COMPLETED', 'Install 7-Zip'], ['START_REQUESTED', 'Install 7-Zip']]);
    expect((await get(t, '/v2/device/102/activities', { pageSize: 5 })).status).toBe(400);

    expect((await run(t, 101, { type: 'SCRIPT', id: 301 })).status).toBe(204); // 101 is offline
    expect(sim.runs('sandbox-alpha').map((r) => [r.deviceId, r.done])).toEqual([[102, true], [101, false]]);
    expect(sim.list('sandbox-alpha', 'software').some((s) => s.deviceId === 101 && s.name === '7-Zip')).toBe(false);
    sim.update('sandbox-alpha', 'devices', 101, { offline: false });
    expect(sim.runs('sandbox-alpha')[1].done).toBe(true);
    expect(sim.list('sandbox-alpha', 'software').some((s) => s.deviceId === 101 && s.name === '7-Zip')).toBe(true);
  });
});

describe('user context: client credentials, authorization code (PKCE) and refresh tokens', () => {
  const runScript = (t: string) => fetch(`${simUrl()}/v2/device/102/script/run`, {
    method: 'POST', headers: { authorization: `Bearer ${t}`, 'content-type': 'application/json' }, body: JSON.stringify({ type: 'SCRIPT', id: 301 }),
  });
  const tokenPost = (form: Record<string, string>) => fetch(`${simUrl()}/ws/oauth/token`, {
    method: 'POST', body: new URLSearchParams({ client_id: 'sandbox', client_secret: 'sandbox-secret', ...form }),
  });
  const REDIRECT = 'https://isv.example/callback';
  /** The consent page, then its Authorize button (a problem with the request comes back from the GET at once). */
  async function authorize(params: Record<string, string>, decision = 'approve'): Promise<URL> {
    const query = { response_type: 'code', client_id: 'sandbox', redirect_uri: REDIRECT, state: 's1', ...params };
    const page = await fetch(`${simUrl()}/ws/oauth/authorize?${new URLSearchParams(query)}`, { redirect: 'manual' });
    if (page.status === 302) return new URL(page.headers.get('location')!);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Authorize application');
    const res = await fetch(`${simUrl()}/ws/oauth/authorize`, { method: 'POST', body: new URLSearchParams({ ...query, decision }), redirect: 'manual' });
    expect(res.status).toBe(302);
    return new URL(res.headers.get('location')!);
  }

  it('the consent page sends the browser back with a code on Authorize and access_denied on Deny', async () => {
    expect((await authorize({ scope: 'monitoring' })).searchParams.get('code')).toBeTruthy();
    const denied = await authorize({ scope: 'monitoring' }, 'deny');
    expect(denied.searchParams.get('error')).toBe('access_denied');
    expect(denied.searchParams.get('state')).toBe('s1');
  });

  it('script/run refuses a client-credentials token with NinjaOne\'s user_context_required, and runs nothing', async () => {
    const res = await runScript(await token());
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual({ error: 'user_context_required', error_description: 'Access key does not have user context which is required for this request', error_code: 5 });
    expect(sim.runs('sandbox-alpha')).toEqual([]);
  });

  it('an authorization code with PKCE gives a token with user context and a refresh token; the code is single use', async () => {
    const verifier = 'v'.repeat(50);
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const back = await authorize({ scope: 'monitoring management control offline_access', code_challenge: challenge, code_challenge_method: 'S256' });
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get('state')).toBe('s1');
    const code = back.searchParams.get('code')!;
    // A wrong verifier is refused (and spends the code).
    const wrong = await tokenPost({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: 'x'.repeat(50) });
    expect([wrong.status, ((await wrong.json()) as any).error]).toEqual([400, 'invalid_grant']);

    const again = (await authorize({ scope: 'monitoring management control offline_access', code_challenge: challenge, code_challenge_method: 'S256' })).searchParams.get('code')!;
    const ok = await tokenPost({ grant_type: 'authorization_code', code: again, redirect_uri: REDIRECT, code_verifier: verifier });
    expect(ok.status).toBe(200);
    const body = (await ok.json()) as { access_token: string; refresh_token: string };
    expect(body.refresh_token).toEqual(expect.any(String));
    expect((await runScript(body.access_token)).status).toBe(204);
    const reused = await tokenPost({ grant_type: 'authorization_code', code: again, redirect_uri: REDIRECT, code_verifier: verifier });
    expect(reused.status).toBe(400);

    // Its refresh token gives tokens with the same user context.
    const refreshed = await tokenPost({ grant_type: 'refresh_token', refresh_token: body.refresh_token });
    expect((await runScript(((await refreshed.json()) as any).access_token)).status).toBe(204);
    expect(sim.runs('sandbox-alpha')).toHaveLength(2);
  });

  it('no refresh token without offline_access; a bad redirect URI, response type or refresh token is refused', async () => {
    const code = (await authorize({ scope: 'monitoring control' })).searchParams.get('code')!;
    const res = await tokenPost({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT });
    expect((await res.json()) as any).not.toHaveProperty('refresh_token');
    const badRedirect = await fetch(`${simUrl()}/ws/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: 'sandbox', redirect_uri: 'javascript:alert(1)' })}`, { redirect: 'manual' });
    expect(badRedirect.status).toBe(400);
    expect((await authorize({ response_type: 'token' })).searchParams.get('error')).toBe('unsupported_response_type');
    const otherRedirect = await tokenPost({ grant_type: 'authorization_code', code: (await authorize({})).searchParams.get('code')!, redirect_uri: 'https://elsewhere.example/' });
    expect(otherRedirect.status).toBe(400);
    expect((await tokenPost({ grant_type: 'refresh_token', refresh_token: 'guess' })).status).toBe(400);
  });
});
