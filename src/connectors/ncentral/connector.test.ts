import { GAMMA_JWT, ncentralFixtures, useNcentralSimulator } from '../../../test/support/ncentral-simulator';
import type { NcActiveIssue, NcCustomer, NcDevice, NcDeviceAssets } from '../../simulators/ncentral/types';
import { lookupWrite } from '../registry';
import { softwareKeys } from '../software-keys';
import type { FetchedRecord, SyncContext, SyncResource } from '../types';
import { VendorHttpClient, VendorHttpError } from '../vendor-http';
import { ncentralConnector } from './connector';
import { checkNcentralPermissions } from './permissions';

const { sim, server } = useNcentralSimulator();
const { gamma } = ncentralFixtures;
const devices = gamma.devices as NcDevice[];
const assets = gamma.assets as NcDeviceAssets[];
const issues = gamma['active-issues'] as NcActiveIssue[];

function ctx(jwt = GAMMA_JWT): SyncContext {
  return { baseUrl: server(), credentials: { jwt }, statusMapping: {}, since: null, http: new VendorHttpClient({ baseDelayMs: 10, maxDelayMs: 50 }) };
}

async function fetchAll<R extends SyncResource>(resource: R, c: SyncContext = ctx()): Promise<FetchedRecord<R>[]> {
  const out: FetchedRecord<R>[] = [];
  for await (const page of ncentralConnector.fetch(resource, c)) out.push(...page);
  return out;
}

describe('N-central connector: devices', () => {
  it('fetches every device verbatim, its customer as its company, attention, connectivity and patch state from the issues and inventories', async () => {
    const records = await fetchAll('devices');
    expect(records).toHaveLength(devices.length);
    for (const d of devices) {
      const r = records.find((x) => x.sourceId === String(d.deviceId))!;
      expect(r.native).toEqual(d);
      const mine = issues.filter((i) => i.deviceId === d.deviceId);
      const inv = assets.find((a) => a.deviceId === d.deviceId)!;
      expect(r.fields).toEqual({
        hostname: d.longName, companyName: d.customerName, companySourceId: String(d.customerId), os: d.supportedOs,
        online: !mine.some((i) => i.notificationState === 7), needsAttention: mine.length > 0,
        patchesPending: inv.scanPending ? 0 : inv.patches.filter((p) => p.installationresult !== 'Installed').length,
        lastContactAt: new Date(d.lastApplianceCheckinTime!),
      });
      expect(r.unmeasured).toEqual(inv.scanPending ? ['patchesPending'] : undefined);
    }
    const f = records.map((r) => r.fields);
    expect(f.some((x) => !x.online) && f.some((x) => x.online)).toBe(true);
    expect(f.some((x) => x.needsAttention) && f.some((x) => !x.needsAttention)).toBe(true);
    expect(f.some((x) => x.patchesPending > 0) && f.some((x) => x.patchesPending === 0)).toBe(true);
  });

  it('sees a device go offline and an issue cleared on the next fetch', async () => {
    const d = devices.find((x) => !issues.some((i) => i.deviceId === x.deviceId))!;
    sim.simulate!('sandbox-gamma', { kind: 'device_offline', target_id: String(d.deviceId) });
    let r = (await fetchAll('devices')).find((x) => x.sourceId === String(d.deviceId))!;
    expect([r.fields.online, r.fields.needsAttention]).toEqual([false, true]);
    sim.clearIssues('sandbox-gamma', d.deviceId);
    r = (await fetchAll('devices')).find((x) => x.sourceId === String(d.deviceId))!;
    expect([r.fields.online, r.fields.needsAttention]).toEqual([true, false]);
  });
});

describe('N-central connector: one bad record', () => {
  it('a device without an id, an issue without a task and a customer without a name are skipped; the rest sync', async () => {
    sim.seed('sandbox-gamma', {
      ...gamma,
      devices: [...devices, { longName: 'NO-ID' }],
      'active-issues': [...issues, { deviceId: devices[0].deviceId, serviceName: 'Broken', notificationState: 'bad' }],
      customers: [...gamma.customers, { customerId: 999, customerName: '   ' }],
    });
    expect((await fetchAll('devices')).map((r) => r.sourceId)).toEqual(devices.map((d) => String(d.deviceId)));
    expect(await fetchAll('incidents')).toHaveLength(issues.length);
    expect(await fetchAll('companies')).toHaveLength(gamma.customers.length);
  });

  it('a null or malformed patch or application row in an inventory is skipped; the device and its other rows sync', async () => {
    const inv = assets.find((a) => !a.scanPending && a.applications.length > 0 && a.patches.length > 0)!;
    const broken = { ...inv, patches: [null, 'junk', ...inv.patches], applications: [null, 7, { displayname: 42 }, ...inv.applications] };
    sim.seed('sandbox-gamma', { ...gamma, assets: assets.map((a) => (a === inv ? broken : a)) });
    const device = (await fetchAll('devices')).find((r) => r.sourceId === String(inv.deviceId))!;
    expect(device.fields.patchesPending).toBe(inv.patches.filter((p) => p.installationresult !== 'Installed').length);
    const apps = (await fetchAll('applications')).filter((r) => r.fields.deviceSourceId === String(inv.deviceId));
    expect(apps.map((r) => r.fields.name)).toEqual(inv.applications.map((x) => x.displayname));
  });
});

describe('N-central connector: companies, applications, incidents', () => {
  it('maps the customers (not the service organisation) as companies, with their external id', async () => {
    const records = await fetchAll('companies');
    const customers = gamma.customers as NcCustomer[];
    expect(records.map((r) => r.sourceId)).toEqual(customers.map((c) => String(c.customerId)));
    expect(records.map((r) => r.fields)).toEqual(customers.map((c) => ({ name: c.customerName, identifier: c.externalId || null })));
  });

  it('keys each installed application by device, name and version, a repeat with #2, and skips a device without inventory', async () => {
    const records = await fetchAll('applications');
    const expected = assets.filter((a) => !a.scanPending).flatMap((a) => {
      const keys = softwareKeys(String(a.deviceId), a.applications.map((x) => ({ name: x.displayname, version: x.version })));
      return a.applications.map((x, i) => ({ sourceId: keys[i], fields: { name: x.displayname, publisher: x.publisher, version: x.version, deviceSourceId: String(a.deviceId), installedAt: x.installationdate } }));
    });
    expect(records.map((r) => ({ sourceId: r.sourceId, fields: r.fields }))).toEqual(expected);
    expect(records.some((r) => r.sourceId.endsWith('#2'))).toBe(true);
    expect(new Set(records.map((r) => r.sourceId)).size).toBe(records.length);
  });

  it('maps every active issue as an incident with its state as severity', async () => {
    const records = await fetchAll('incidents');
    expect(records.map((r) => [r.sourceId, r.fields.severity, r.fields.deviceSourceId])).toEqual(
      issues.map((i) => [String(i.taskId), ({ 3: 'warning', 4: 'warning', 5: 'critical', 6: 'failed', 7: 'disconnected' } as Record<number, string>)[i.notificationState], String(i.deviceId)]));
    expect(records[0].fields.message).toBe(`${issues[0].serviceName}: critical`);
  });
});

describe('N-central connector: auth, limits and errors', () => {
  it('renews an expired access token with the refresh token, and exchanges the User-API Token again after the server restarts', async () => {
    await ncentralConnector.probe(ctx());
    const count = () => [sim.faults.countRequests('/api/auth/authenticate'), sim.faults.countRequests('/api/auth/refresh')];
    const [a0, r0] = count();
    sim.expireTokens();
    await ncentralConnector.probe(ctx());
    expect(count()).toEqual([a0, r0 + 1]);
    sim.reboot();
    await ncentralConnector.probe(ctx());
    // The refresh token died with the reboot: refused once, then the JWT again.
    expect(count()).toEqual([a0 + 1, r0 + 2]);
  });

  it('answers a token N-central does not know with the 401 as it came', async () => {
    const err = await ncentralConnector.probe(ctx('not-a-token')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VendorHttpError);
    expect((err as VendorHttpError).status).toBe(401);
  });

  it('keeps under the per-endpoint in-flight limits, and a 429 past one is retried', async () => {
    sim.faults.setLatency(20);
    sim.faults.inject({ status: 429, times: 1, pathIncludes: '/assets' });
    const c = { ...ctx(), concurrency: 3 };
    expect((await fetchAll('applications', c)).length).toBeGreaterThan(0);
    const stats = sim.limitStats();
    // The simulator admits at most 3 at once: what shows the connector kept under it is that nothing was
    // refused past the limit, and that every device's inventory was still read (the injected 429 and its retry aside).
    expect(stats.throttled).toBe(0);
    expect(sim.faults.countRequests('/assets', 'GET')).toBe(devices.length + 1);
  });

  it('fails a list a page of which answers an engine error in a 200 OK, rather than read it as empty', async () => {
    for (const path of ['/api/devices', '/api/customers']) {
      sim.faults.inject({ status: 200, times: 1, pathIncludes: path, method: 'GET' });
      const resource = path === '/api/devices' ? 'devices' : 'companies';
      const err = await fetchAll(resource).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(VendorHttpError);
      expect((err as VendorHttpError).message).toMatch(/Injected core engine error/);
      sim.faults.clear();
    }
  });

  it('checks each read permission with one read', async () => {
    expect(await checkNcentralPermissions(ctx())).toEqual([
      { id: 'customers', ok: true }, { id: 'devices', ok: true }, { id: 'active-issues', ok: true },
    ]);
  });

  it('declares device deploy unsupported, with the reason', () => {
    const found = lookupWrite('ncentral', 'device.deploy');
    expect('refused' in found && found.message).toMatch(/scheduled-tasks\/direct.*no listing of the Script\/Software Repository/);
  });
});
