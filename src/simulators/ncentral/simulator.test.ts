/** The N-central simulator is as strict as the server: its token exchange, expiry, reboot, in-flight limits, paging and errors. */
import { GAMMA_JWT, ncentralFixtures, useNcentralSimulator } from '../../../test/support/ncentral-simulator';

const { sim, url } = useNcentralSimulator({ inFlight: { assets: 1 } });

async function call(path: string, init: RequestInit = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url()}${path}`, init);
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
async function tokens(jwt = GAMMA_JWT, headers: Record<string, string> = {}) {
  return call('/api/auth/authenticate', { method: 'POST', headers: { authorization: `Bearer ${jwt}`, ...headers } });
}
const bearer = (t: string) => ({ headers: { authorization: `Bearer ${t}` } });

describe('N-central simulator: authentication', () => {
  it('exchanges a known User-API Token for an access and a refresh token, and refuses an unknown one', async () => {
    const ok = await tokens();
    expect(ok.status).toBe(200);
    expect(ok.body.tokens).toMatchObject({ access: { type: 'Bearer', expirySeconds: 3600 }, refresh: { type: 'Body', expirySeconds: 90000 } });
    expect((await tokens('forged')).status).toBe(401);
    expect((await call('/api/devices', bearer(GAMMA_JWT))).status).toBe(401);
  });

  it('honours an expiry override within the system setting, and refuses one past it or malformed', async () => {
    expect((await tokens(GAMMA_JWT, { 'x-access-expiry-override': '120s' })).body.tokens.access.expirySeconds).toBe(120);
    expect((await tokens(GAMMA_JWT, { 'x-access-expiry-override': '2h' })).status).toBe(400);
    expect((await tokens(GAMMA_JWT, { 'x-access-expiry-override': 'soon' })).status).toBe(400);
  });

  it('refreshes with the text/plain refresh token once (it is spent), and forgets every token on a reboot', async () => {
    const t = (await tokens()).body.tokens;
    const renewed = await call('/api/auth/refresh', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: t.refresh.token });
    expect(renewed.status).toBe(200);
    expect((await call('/api/auth/refresh', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: t.refresh.token })).status).toBe(401);
    const access = renewed.body.tokens.access.token;
    expect((await call('/api/devices', bearer(access))).status).toBe(200);
    sim.expireTokens();
    expect((await call('/api/devices', bearer(access))).status).toBe(401);
    const again = (await tokens()).body.tokens;
    sim.reboot();
    expect((await call('/api/devices', bearer(again.access.token))).status).toBe(401);
    expect((await call('/api/auth/refresh', { method: 'POST', body: again.refresh.token })).status).toBe(401);
    expect((await tokens()).status).toBe(200);
  });
});

describe('N-central simulator: lists, limits and errors', () => {
  it('pages from 1 with pageSize up to 1000, and refuses anything else', async () => {
    const t = (await tokens()).body.tokens.access.token;
    const page = await call('/api/devices?pageNumber=2&pageSize=5', bearer(t));
    const all = ncentralFixtures.gamma.devices as { deviceId: number }[];
    expect(page.body).toMatchObject({ pageNumber: 2, pageSize: 5, itemCount: 5, totalItems: all.length, totalPages: Math.ceil(all.length / 5) });
    expect(page.body.data.map((d: any) => d.deviceId)).toEqual(all.slice(5, 10).map((d) => d.deviceId));
    for (const q of ['pageNumber=0', 'pageSize=1001', 'pageSize=abc', 'sortOrder=sideways']) expect((await call(`/api/devices?${q}`, bearer(t))).status).toBe(400);
  });

  it('answers 429 past an endpoint\'s requests in flight, other endpoints unaffected', async () => {
    const t = (await tokens()).body.tokens.access.token;
    sim.faults.setLatency(100);
    const id = (ncentralFixtures.gamma.devices as { deviceId: number }[])[0].deviceId;
    const answers = await Promise.all([call(`/api/devices/${id}/assets`, bearer(t)), call(`/api/devices/${id}/assets`, bearer(t)), call('/api/customers', bearer(t))]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 429]);
    expect(sim.limitStats().throttled).toBe(1);
  });

  it('answers an inventory not yet discovered as an error message in a 200 OK, an unknown device 404', async () => {
    const t = (await tokens()).body.tokens.access.token;
    const pending = (ncentralFixtures.gamma.assets as { deviceId: number; scanPending?: boolean }[]).find((a) => a.scanPending)!;
    const res = await call(`/api/devices/${pending.deviceId}/assets`, bearer(t));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: {}, _links: {}, errorMessage: expect.stringContaining('asset discovery has not completed') });
    expect((await call('/api/devices/999999/assets', bearer(t))).status).toBe(404);
    expect((await call('/api/org-units/999999/active-issues', bearer(t))).status).toBe(404);
  });

  it('simulates a device going offline as a disconnected active issue, once', async () => {
    const { target_id } = sim.simulate!('sandbox-gamma', { kind: 'device_offline' });
    expect(sim.list('sandbox-gamma', 'active-issues').filter((i) => String(i.deviceId) === target_id && i.notificationState === 7)).toHaveLength(1);
    expect(() => sim.simulate!('sandbox-gamma', { kind: 'device_offline', target_id })).toThrow(/already offline/);
    expect(() => sim.simulate!('sandbox-gamma', { kind: 'ticket_close' })).toThrow(/cannot make/);
  });

  it('keeps its records across an export and import', () => {
    sim.simulate!('sandbox-gamma', { kind: 'company_renamed', target_id: '102', name: 'Pinecrest Freight' });
    const state = sim.exportState('sandbox-gamma')!;
    sim.reset();
    sim.importState('sandbox-gamma', state);
    expect(sim.list('sandbox-gamma', 'customers').find((c) => c.customerId === 102)!.customerName).toBe('Pinecrest Freight');
  });
});
