import { dattoFixtures, useDattoRmmSimulator } from '../../../test/support/dattormm-simulator';
import type { DattoComponent, DattoDevice } from './types';

// A short added delay keeps the limit tests quick; the counts are the vendor's.
const { sim, url, api } = useDattoRmmSimulator({ delayMs: 5 });
const { beta } = dattoFixtures;
const BASIC = `Basic ${Buffer.from('public-client:public').toString('base64')}`;

async function token(apiKey = 'sandbox-beta', apiSecret = 'sandbox-secret', basic = BASIC): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url()}/auth/oauth/token`, {
    method: 'POST', headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'password', username: apiKey, password: apiSecret }),
  });
  return { status: res.status, body: await res.json() };
}
async function bearer(): Promise<string> {
  const t = await token();
  expect(t.status).toBe(200);
  return t.body.access_token;
}
async function call(t: string, path: string, init: RequestInit = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(path.startsWith('http') ? path : `${api()}${path}`, { ...init, headers: { authorization: `Bearer ${t}`, 'content-type': 'application/json', ...(init.headers as Record<string, string>) } });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

describe('Datto RMM simulator: authentication', () => {
  it('issues 100-hour tokens for the password grant of the public client only', async () => {
    const ok = await token();
    expect(ok.body).toMatchObject({ token_type: 'bearer', expires_in: 360_000 });
    expect((await token('sandbox-beta', 'wrong')).body).toEqual({ error: 'invalid_grant', error_description: 'Bad credentials' });
    expect((await token('sandbox-beta', 'sandbox-secret', `Basic ${Buffer.from('other:client').toString('base64')}`)).status).toBe(401);
  });

  it('refuses the API without a valid bearer token, and revoked tokens', async () => {
    expect((await fetch(`${api()}/v2/account`)).status).toBe(401);
    expect((await call('forged', '/v2/account')).body.error).toBe('invalid_token');
    const t = await bearer();
    expect((await call(t, '/v2/account')).status).toBe(200);
    sim.expireTokens();
    expect((await call(t, '/v2/account')).status).toBe(401);
  });
});

describe('Datto RMM simulator: lists and paging', () => {
  it('pages with page and max (at most 250), absolute page URLs and counts', async () => {
    sim.grow('sandbox-beta', 'devices', 500);
    const t = await bearer();
    const total = beta.devices.length + 500;
    const first = await call(t, '/v2/account/devices?max=1000');
    expect(first.body.devices).toHaveLength(250);
    expect(first.body.pageDetails).toMatchObject({ count: 250, totalCount: total, prevPageUrl: null });
    const seen = new Set<string>(first.body.devices.map((d: DattoDevice) => d.uid));
    let next: string | null = first.body.pageDetails.nextPageUrl;
    for (let i = 0; next && i < 10; i++) {
      const page = await call(t, next);
      for (const d of page.body.devices) seen.add(d.uid);
      next = page.body.pageDetails.nextPageUrl;
    }
    expect(seen.size).toBe(total);
    expect((await call(t, '/v2/account/devices?max=0')).status).toBe(400);
  });

  it('serves sites, a site\'s devices, one device, open and resolved alerts and components', async () => {
    const t = await bearer();
    const site = beta.sites[0] as { uid: string };
    expect((await call(t, '/v2/account/sites')).body.sites).toHaveLength(beta.sites.length);
    const siteDevices = (await call(t, `/v2/site/${site.uid}/devices`)).body.devices;
    expect(siteDevices.length).toBe((beta.devices as DattoDevice[]).filter((d) => d.siteUid === site.uid).length);
    expect((await call(t, '/v2/site/nope/devices')).status).toBe(404);
    const d = beta.devices[0] as DattoDevice;
    expect((await call(t, `/v2/device/${d.uid}`)).body).toEqual(d);
    const missing = await call(t, '/v2/device/nope');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ timestamp: expect.any(Number), status: 404, error: 'Not Found', path: '/v2/device/nope' });
    const open = (await call(t, '/v2/account/alerts/open')).body.alerts;
    const resolved = (await call(t, '/v2/account/alerts/resolved')).body.alerts;
    expect(open.length + resolved.length).toBe(beta.alerts.length);
    expect(resolved.every((a: { resolved: boolean }) => a.resolved)).toBe(true);
    expect((await call(t, '/v2/account/components')).body.components).toHaveLength(beta.components.length);
  });

  it('audits software of computers only: 400 for a printer, 404 for an unknown device', async () => {
    const t = await bearer();
    const printer = (beta.devices as DattoDevice[]).find((d) => d.deviceClass === 'printer')!;
    expect((await call(t, `/v2/audit/device/${printer.uid}/software`)).status).toBe(400);
    expect((await call(t, '/v2/audit/device/nope/software')).status).toBe(404);
    const pc = (beta.devices as DattoDevice[]).find((d) => d.deviceClass === 'device')!;
    expect((await call(t, `/v2/audit/device/${pc.uid}/software`)).body.software.length).toBeGreaterThan(0);
  });
});

describe('Datto RMM simulator: quick jobs and the activity log', () => {
  const component = () => (beta.components as DattoComponent[]).find((c) => c.name === 'Install 7-Zip')!;
  const job = (name: unknown, componentUid: unknown, variables: unknown = []) => JSON.stringify({ jobName: name, jobComponent: { componentUid, variables } });

  it('refuses what the vendor refuses (no name, unknown component or variable, unknown device) and runs nothing', async () => {
    const t = await bearer();
    const d = (beta.devices as DattoDevice[]).find((x) => x.online)!;
    for (const body of [job('', component().uid), job('x', 'nope'), job('x', component().uid, [{ name: 'nope', value: '1' }]), '{not json']) {
      expect((await call(t, `/v2/device/${d.uid}/quickjob`, { method: 'PUT', body })).status).toBe(400);
    }
    expect((await call(t, '/v2/device/nope/quickjob', { method: 'PUT', body: job('x', component().uid) })).status).toBe(404);
    expect(sim.runs('sandbox-beta')).toHaveLength(0);
  });

  it('runs at once on an online device (its audit shows the software) and waits on an offline one; both are logged', async () => {
    const t = await bearer();
    const devices = beta.devices as DattoDevice[];
    const online = devices.find((x) => x.online && x.deviceClass === 'device')!;
    const offline = devices.find((x) => !x.online)!;
    const ran = await call(t, `/v2/device/${online.uid}/quickjob`, { method: 'PUT', body: job('Deploy Install 7-Zip [ref:m-1]', component().uid) });
    expect(ran.status).toBe(200);
    expect(ran.body.job).toMatchObject({ name: 'Deploy Install 7-Zip [ref:m-1]', status: 'active' });
    expect((await call(t, `/v2/job/${ran.body.job.uid}`)).body.status).toBe('completed');
    expect((await call(t, `/v2/audit/device/${online.uid}/software?max=250`)).body.software.map((s: { name: string }) => s.name)).toContain('7-Zip');

    const waiting = await call(t, `/v2/device/${offline.uid}/quickjob`, { method: 'PUT', body: job('Deploy Install 7-Zip [ref:m-2]', component().uid) });
    expect((await call(t, `/v2/job/${waiting.body.job.uid}`)).body.status).toBe('active');
    sim.updateDevice('sandbox-beta', offline.uid, { online: true });
    expect((await call(t, `/v2/job/${waiting.body.job.uid}`)).body.status).toBe('completed');

    const log = await call(t, `/v2/activity-logs?entities=device&categories=job&siteIds=${online.siteId}`);
    expect(log.body.activities.some((a: { deviceId: number; details: string }) => a.deviceId === online.id && a.details.includes('[ref:m-1]'))).toBe(true);
    expect(log.body.activities.every((a: { site: { id: number } }) => a.site.id === online.siteId)).toBe(true);
    const old = await call(t, `/v2/activity-logs?categories=job&until=2020-01-01T00:00:00Z`);
    expect(old.body.activities).toEqual([]);
  });
});

describe('Datto RMM simulator: the account\'s request limits', () => {
  it('reports its use; adds the delay past 90 % of 600 reads a window and answers 429 past 600, in its error shape', async () => {
    const t = await bearer();
    let throttled: { status: number; body: any } | null = null;
    for (let i = 0; i < 601; i++) {
      const r = await call(t, '/v2/system/pagination');
      if (r.status !== 200) { throttled = { ...r, i } as never; break; }
    }
    expect(throttled).toMatchObject({ status: 429, body: { status: 429, error: 'Too Many Requests' }, i: 600 });
    expect(sim.limitStats('sandbox-beta')).toMatchObject({ throttled: 1, delayed: 60 });
    const rate = await call(t, '/v2/system/request_rate');
    expect(rate.status).toBe(429);
  });

  it('refuses past 100 writes a window, independently of reads', async () => {
    const t = await bearer();
    const d = (beta.devices as DattoDevice[]).find((x) => !x.online)!;
    const c = (beta.components as DattoComponent[])[0];
    const statuses: number[] = [];
    for (let i = 0; i < 101; i++) statuses.push((await call(t, `/v2/device/${d.uid}/quickjob`, { method: 'PUT', body: JSON.stringify({ jobName: `j${i}`, jobComponent: { componentUid: c.uid, variables: [] } }) })).status);
    expect(statuses.slice(0, 100).every((s) => s === 200)).toBe(true);
    expect(statuses[100]).toBe(429);
    expect((await call(t, '/v2/system/request_rate')).body).toMatchObject({ slidingTimeWindowSizeSeconds: 60, accountRateLimit: 600, accountCutOffRatio: 0.9, accountCount: 1 });
  });

  it('answers injected faults in its own error shape', async () => {
    sim.faults.inject({ status: 503, times: 1, pathIncludes: '/v2/account' });
    const t = await bearer();
    const r = await call(t, '/v2/account');
    expect(r).toMatchObject({ status: 503, body: { status: 503, error: 'Service Unavailable' } });
  });
});
