/**
 * Device deploy over HTTP against the RMM simulator (docs/architecture.md, Device write and ask): the catalogue is synced
 * and listed; the grant gates it; an unknown package, a package without a build for the device's OS,
 * a target_os mismatch and an unknown device are refused with nothing sent; a preview sends nothing;
 * a commit runs exactly once per key (replayed, raced, throttled, or answered into a dropped
 * connection); an offline device answers queued and its later state reaches the store and the feed.
 */
import type { NinjaOneSimulator } from '../src/simulators/ninjaone/simulator';
import { startTestService, type TestService } from './support/service';

let svc: TestService;
let ninja: NinjaOneSimulator;
const ALPHA = 'sandbox-alpha';

beforeAll(async () => {
  svc = await startTestService();
  ninja = svc.services.simulators!.ninjaone as NinjaOneSimulator;
}, 120_000);
afterAll(async () => { await svc?.close(); });

let keySeq = 0;
const newKey = () => `deploy-${Date.now()}-${keySeq++}`;
const deployPath = (device: string, tenant = svc.alphaId) => `/tenants/${tenant}/devices/${encodeURIComponent(device)}/deploy`;
const deploy = (device: string, json: Record<string, unknown>, tenant?: string) => svc.api(deployPath(device, tenant), { method: 'POST', json });
/** Runs the simulator received, and POSTs that reached its run endpoint (refused ones included). */
const runs = () => ninja.runs(ALPHA).length;
const runPosts = () => ninja.faults.countRequests('/script/run', 'POST');

async function injectFault(fault: Record<string, unknown>) {
  const res = await fetch(`${svc.url}/sandbox-vendors/ninjaone/_control/faults`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.config.adminToken}` }, body: JSON.stringify(fault),
  });
  expect(res.status).toBe(204);
}
const clearFaults = () =>
  fetch(`${svc.url}/sandbox-vendors/ninjaone/_control/faults`, { method: 'DELETE', headers: { authorization: `Bearer ${svc.config.adminToken}` } });
afterEach(async () => { await clearFaults(); });

async function sync(tenantId: string): Promise<void> {
  const res = await svc.api(`/tenants/${tenantId}/sync`, { method: 'POST', json: {} });
  expect(res.body.ok).toBe(true);
}

/** Asserts a refusal and that nothing reached the vendor's run endpoint. */
async function refusedWithNothingSent(device: string, json: Record<string, unknown>, status: number, code: string, tenant?: string) {
  const [r0, p0] = [runs(), runPosts()];
  for (const dryRun of [true, false]) {
    const res = await deploy(device, { ...json, dry_run: dryRun, idempotency_key: newKey() }, tenant);
    expect([res.status, res.body.code]).toEqual([status, code]);
    if (status === 422) expect(res.body.details.field).toBe(json.target_os ? 'target_os' : 'package_name');
  }
  expect([runs(), runPosts()]).toEqual([r0, p0]);
}

describe('the package catalogue', () => {
  it('is synced from the RMM and served from the store with vendor and raw', async () => {
    const res = await svc.api(`/tenants/${svc.alphaId}/packages?limit=500`);
    expect(res.status).toBe(200);
    const byName = new Map(res.body.packages.map((p: any) => [p.name, p]));
    const chrome: any = byName.get('Install Google Chrome');
    expect(chrome).toMatchObject({ source: 'ninjaone', source_id: '302', operating_systems: ['mac', 'windows'], active: true });
    expect(chrome.raw.operatingSystems).toEqual(['WINDOWS', 'MAC']);
    expect(chrome.vendor).toEqual({ connector: 'ninjaone', native_id: '302', native: chrome.raw });
    expect((byName.get('Install Adobe Acrobat Reader') as any).active).toBe(false);
    expect(res.body.packages).toHaveLength(ninja.list(ALPHA, 'scripts').length);
  });
});

describe('deploy refusals send nothing', () => {
  it('grant_missing on beta, where the MSP has not turned rmm.device.write on', async () => {
    const before = ninja.runs('sandbox-beta').length;
    const res = await deploy('2003', { package_name: 'Install 7-Zip' }, svc.betaId);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('grant_missing');
    expect(res.body.needed).toContain('rmm.device.write');
    await refusedWithNothingSent('2003', { package_name: 'Install 7-Zip' }, 403, 'grant_missing', svc.betaId);
    expect(ninja.runs('sandbox-beta').length).toBe(before);
  });

  it('an unknown package and an inactive one: 422 naming package_name', async () => {
    await refusedWithNothingSent('102', { package_name: 'Install Notepad Deluxe' }, 422, 'validation');
    await refusedWithNothingSent('102', { package_name: 'Install Adobe Acrobat Reader' }, 422, 'validation');
  });

  it('a package with no build for the device\'s OS: 422 naming package_name', async () => {
    // 7-Zip is Windows only; 135 is an Ubuntu server, 126 a Mac.
    await refusedWithNothingSent('135', { package_name: 'Install 7-Zip' }, 422, 'validation');
    await refusedWithNothingSent('126', { package_name: 'Install htop' }, 422, 'validation');
  });

  it('a target_os that does not match the device: 422 naming target_os', async () => {
    await refusedWithNothingSent('102', { package_name: 'Install Google Chrome', target_os: 'mac' }, 422, 'validation');
    const ok = await deploy('102', { package_name: 'Install Google Chrome', target_os: 'Windows' });
    expect(ok.status).toBe(200);
  });

  it('an unknown device, a device of another tenant and unstorable text: 404 not_found', async () => {
    await refusedWithNothingSent('99999', { package_name: 'Install 7-Zip' }, 404, 'not_found');
    await refusedWithNothingSent('2003', { package_name: 'Install 7-Zip' }, 404, 'not_found'); // a beta device, asked of alpha
    await refusedWithNothingSent('bad\u0000id', { package_name: 'Install 7-Zip' }, 404, 'not_found');
  });

  it('an RMM whose connector does not declare deploy (N-central on gamma): 501 not_supported saying why, previews and commits alike, nothing run there', async () => {
    const nc = svc.services.simulators!.ncentral;
    nc.faults.resetLog();
    for (const dryRun of [true, false]) {
      const res = await deploy('3002', { package_name: 'Install 7-Zip', dry_run: dryRun, idempotency_key: newKey() }, svc.gammaId);
      expect([res.status, res.body.code]).toEqual([501, 'not_supported']);
      expect(res.body.message).toMatch(/does not declare device\.deploy\): .*scheduled-tasks\/direct/);
    }
    expect(nc.faults.countRequests('/scheduled-tasks')).toBe(0);
  });
});

describe('deploy preview and commit', () => {
  it('a preview is the default, shows the exact request, and sends nothing; the device may be named by our id', async () => {
    const devices = (await svc.api(`/tenants/${svc.alphaId}/devices?limit=500`)).body.devices;
    const ours = devices.find((d: any) => d.source_id === '104').id;
    const [r0, p0] = [runs(), runPosts()];
    const res = await deploy(ours, { package_name: 'install google chrome' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ dry_run: true, device_id: ours, device_source_id: '104', package_source_id: '302', package_name: 'Install Google Chrome', os: 'windows', queued: false });
    expect(res.body.preview.targets[0]).toMatchObject({ connector: 'ninjaone', requests: [{ method: 'POST', path: '/v2/device/104/script/run', body: { type: 'SCRIPT', id: 302, runAs: 'system' } }] });
    expect([runs(), runPosts()]).toEqual([r0, p0]);
  });

  it('a commit runs the previewed request once; a replay with the same key runs nothing; another device under that key is a conflict', async () => {
    const body = { package_name: 'Install Mozilla Firefox', idempotency_key: newKey() };
    const r0 = runs();
    const res = await deploy('108', { ...body, dry_run: false });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ dry_run: false, idempotent_replay: false, created: false, device_source_id: '108', queued: false, reconciled: false });
    expect(ninja.runs(ALPHA).slice(r0)).toEqual([expect.objectContaining({ deviceId: 108, scriptId: 303, runAs: 'system', done: true })]);
    const replay = await deploy('108', { ...body, dry_run: false });
    expect(replay.status).toBe(200);
    expect(replay.body.idempotent_replay).toBe(true);
    expect((await deploy('109', { ...body, dry_run: false })).body.code).toBe('idempotency_conflict');
    expect(runs()).toBe(r0 + 1);
  });

  it('ten concurrent commits with one key run once', async () => {
    const body = { package_name: 'Install Microsoft Teams', idempotency_key: newKey(), dry_run: false };
    const r0 = runs();
    const answers = await Promise.all(Array.from({ length: 10 }, () => deploy('110', body)));
    for (const a of answers) expect([200, 409]).toContain(a.status);
    expect(answers.filter((a) => a.status === 200 && !a.body.idempotent_replay)).toHaveLength(1);
    expect(runs()).toBe(r0 + 1);
  });

  it('a 429 on the run, then success: one run', async () => {
    await injectFault({ status: 429, times: 1, retryAfterSeconds: 0, pathIncludes: '/script/run', method: 'POST' });
    const [r0, p0] = [runs(), runPosts()];
    const res = await deploy('112', { package_name: 'Install 7-Zip', idempotency_key: newKey(), dry_run: false });
    expect(res.status).toBe(200);
    expect(res.body.reconciled).toBe(false);
    expect(runPosts()).toBe(p0 + 2); // the throttled try and the one that landed
    expect(runs()).toBe(r0 + 1);
  });

  it('a run the vendor accepted whose answer was lost is found in the activity log, not sent again', async () => {
    await injectFault({ status: 200, times: 1, pathIncludes: '/script/run', method: 'POST', afterHandler: 'drop' });
    const r0 = runs();
    const res = await deploy('114', { package_name: 'Install 7-Zip', idempotency_key: newKey(), dry_run: false });
    expect(res.status).toBe(200);
    expect(res.body.reconciled).toBe(true);
    expect(runs()).toBe(r0 + 1);
  });
});

describe('user context (NinjaOne runs scripts only for a token with a user\'s context)', () => {
  it('the simulator refuses script/run with a client-credentials token as NinjaOne does, and runs it with a refreshed one', async () => {
    const base = `${svc.url}/sandbox-vendors/ninjaone`;
    const token = async (form: Record<string, string>) => {
      const res = await fetch(`${base}/ws/oauth/token`, { method: 'POST', body: new URLSearchParams({ client_id: 'sandbox', client_secret: 'sandbox-secret', ...form }) });
      return ((await res.json()) as any).access_token as string;
    };
    const run = (t: string) => fetch(`${base}/v2/device/104/script/run`, {
      method: 'POST', headers: { authorization: `Bearer ${t}`, 'content-type': 'application/json' }, body: JSON.stringify({ type: 'SCRIPT', id: 302, runAs: 'system' }),
    });
    const r0 = runs();
    const refused = await run(await token({ grant_type: 'client_credentials', scope: 'monitoring management control' }));
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({ error: 'user_context_required', error_description: 'Access key does not have user context which is required for this request', error_code: 5 });
    expect(runs()).toBe(r0);
    expect((await run(await token({ grant_type: 'refresh_token', refresh_token: 'sandbox-refresh-token' }))).status).toBe(204);
    expect(runs()).toBe(r0 + 1);
    // A refresh token that is not the client's is refused.
    const bad = await fetch(`${base}/ws/oauth/token`, { method: 'POST', body: new URLSearchParams({ grant_type: 'refresh_token', client_id: 'sandbox', client_secret: 'sandbox-secret', refresh_token: 'guess' }) });
    expect([bad.status, ((await bad.json()) as any).error]).toEqual([400, 'invalid_grant']);
  });

  it('a deploy through a client-credentials connection is refused with the vendor\'s reason and runs nothing; the authorised sandbox connection runs it once', async () => {
    // An MSP whose NinjaOne connection was made with client credentials only.
    const isv = (await svc.services.ds.query("SELECT id FROM isvs WHERE name = 'Sandbox ISV'"))[0].id;
    const tenant = (await svc.graphql('mutation { create_tenant(name: "Client credentials RMM", slug: "cc-rmm") { id } }')).data.create_tenant.id;
    const c = await svc.graphql('mutation($input: CreateConnectionInput!) { create_connection(input: $input) { id } }', {
      input: { tenant_id: tenant, kind: 'rmm', connector: 'ninjaone', base_url: `${svc.url}/sandbox-vendors/ninjaone`, credentials: { clientId: 'sandbox', clientSecret: 'sandbox-secret' } },
    });
    expect(c.errors).toBeUndefined();
    await svc.graphql('mutation($i: ID!, $c: ID!) { set_grant(isv_id: $i, connection_id: $c, keys: ["rmm.device.write"]) { id } }', { i: isv, c: c.data.create_connection.id });
    await sync(tenant);
    const [r0, p0] = [runs(), runPosts()];
    const refused = await deploy('104', { package_name: 'Install Google Chrome', dry_run: false, idempotency_key: newKey() }, tenant);
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe('validation');
    expect(refused.body.message).toMatch(/user_context_required/);
    expect(refused.body.message).toMatch(/authorization-code grant/);
    expect(runs()).toBe(r0);
    expect(runPosts()).toBe(p0 + 1);

    // The sandbox's connection holds the refresh token of an authorisation: the same deploy runs once.
    const done = await deploy('104', { package_name: 'Install Google Chrome', dry_run: false, idempotency_key: newKey() });
    expect(done.status).toBe(200);
    expect(ninja.runs(ALPHA).slice(r0)).toEqual([expect.objectContaining({ deviceId: 104, scriptId: 302, done: true })]);
  }, 60_000);
});

describe('an offline device', () => {
  it('answers queued: true; the run happens when it comes back, and that reaches the store and the feed', async () => {
    // 115: a Windows 11 workstation that is offline in the fixtures.
    const preview = await deploy('115', { package_name: 'Install Google Chrome' });
    expect(preview.body.queued).toBe(true);
    const r0 = runs();
    const res = await deploy('115', { package_name: 'Install Google Chrome', idempotency_key: newKey(), dry_run: false });
    expect(res.status).toBe(200);
    expect(res.body.queued).toBe(true);
    expect(ninja.runs(ALPHA).slice(r0)).toEqual([expect.objectContaining({ deviceId: 115, done: false })]);
    const installed = () => ninja.list(ALPHA, 'software').some((s) => s.deviceId === 115 && s.name === 'Google Chrome');
    expect(installed()).toBe(false);

    ninja.update(ALPHA, 'devices', 115, { offline: false, lastContact: Date.now() / 1000 });
    expect(installed()).toBe(true);
    expect(ninja.runs(ALPHA)[r0].done).toBe(true);
    expect(runs()).toBe(r0 + 1);

    await sync(svc.alphaId);
    const apps = (await svc.api(`/tenants/${svc.alphaId}/applications?limit=500`)).body.applications;
    expect(apps.some((a: any) => a.device_source_id === '115' && a.name === 'Google Chrome')).toBe(true);
    const events = (await svc.api(`/tenants/${svc.alphaId}/connections/events?kind=device.updated&limit=500`)).body.events;
    expect(events.some((e: any) => e.vendor_id === '115' && /came online/.test(e.summary))).toBe(true);
  }, 60_000);
});
