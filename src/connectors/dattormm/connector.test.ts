import { dattoFixtures, useDattoRmmSimulator } from '../../../test/support/dattormm-simulator';
import type { DattoAlert, DattoComponent, DattoDevice, DattoDeviceSoftware } from '../../simulators/dattormm/types';
import type { FetchedRecord, SyncContext, SyncResource } from '../types';
import { VendorHttpClient, VendorHttpError } from '../vendor-http';
import { DATTO_RMM_PLATFORMS, dattoRmmCapabilities, platformBaseUrl, type DattoRmmPlatform } from './capabilities';
import { tokenUrl } from './client';
import { dattoRmmConnector } from './connector';
import { checkPermissions } from './permissions';

const { sim, api } = useDattoRmmSimulator();

/** The platform a base URL is the API root of, or null (another host: a simulator, a proxy). */
function platformOf(baseUrl: string): DattoRmmPlatform | null {
  const host = URL.canParse(baseUrl) ? new URL(baseUrl).hostname : '';
  return DATTO_RMM_PLATFORMS.find((p) => host === `${p.platform}-api.centrastage.net`)?.platform ?? null;
}
const { beta } = dattoFixtures;

function ctx(apiKey = 'sandbox-beta', apiSecret = 'sandbox-secret'): SyncContext {
  return { baseUrl: api(), credentials: { apiKey, apiSecret }, statusMapping: {}, since: null, http: new VendorHttpClient({ baseDelayMs: 10 }) };
}

async function fetchAll<R extends SyncResource>(resource: R, c: SyncContext): Promise<{ pages: number; records: FetchedRecord<R>[] }> {
  const records: FetchedRecord<R>[] = [];
  let pages = 0;
  for await (const page of dattoRmmConnector.fetch(resource, c)) {
    pages += 1;
    records.push(...page);
  }
  return { pages, records };
}

describe('Datto RMM connector: devices', () => {
  it('fetches every device verbatim, its site as its company, with the derived flags right', async () => {
    const { records } = await fetchAll('devices', ctx());
    const devices = beta.devices as DattoDevice[];
    expect(records).toHaveLength(devices.length);
    const alerting = new Set((beta.alerts as DattoAlert[]).filter((a) => !a.resolved).map((a) => a.alertSourceInfo.deviceUid));
    for (const d of devices) {
      const r = records.find((x) => x.sourceId === d.uid)!;
      expect(r.native).toEqual(d);
      expect(r.fields).toEqual({
        hostname: d.hostname,
        companyName: d.siteName,
        companySourceId: d.siteUid,
        os: d.operatingSystem || null,
        online: d.online,
        needsAttention: alerting.has(d.uid),
        patchesPending: d.patchManagement?.patchesApprovedPending ?? 0,
        lastContactAt: new Date(d.lastSeen!),
      });
    }
    const f = records.map((r) => r.fields);
    expect(f.some((x) => !x.online) && f.some((x) => x.online)).toBe(true);
    expect(f.some((x) => x.needsAttention) && f.some((x) => !x.needsAttention)).toBe(true);
    expect(f.some((x) => x.patchesPending > 0) && f.some((x) => x.patchesPending === 0)).toBe(true);
  });

  it('sees a device go offline and an alert raised and resolved on the next fetch', async () => {
    const d = (beta.devices as DattoDevice[]).find((x) => x.online && x.deviceClass === 'device')!;
    sim.updateDevice('sandbox-beta', d.uid, { online: false });
    const alert = sim.raiseAlert('sandbox-beta', d.uid, 'Device offline');
    let r = (await fetchAll('devices', ctx())).records.find((x) => x.sourceId === d.uid)!;
    expect(r.fields).toMatchObject({ online: false, needsAttention: true });
    sim.resolveAlert('sandbox-beta', alert.alertUid);
    const others = (beta.alerts as DattoAlert[]).some((a) => !a.resolved && a.alertSourceInfo.deviceUid === d.uid);
    r = (await fetchAll('devices', ctx())).records.find((x) => x.sourceId === d.uid)!;
    expect(r.fields.needsAttention).toBe(others);
  });

  it('pages more devices than one page holds (max 250, following nextPageUrl)', async () => {
    sim.grow('sandbox-beta', 'devices', 600);
    const { pages, records } = await fetchAll('devices', ctx());
    expect(records).toHaveLength(beta.devices.length + 600);
    expect(new Set(records.map((r) => r.sourceId)).size).toBe(records.length);
    expect(pages).toBe(3);
  });

  it('skips a deleted device and one without a uid; the rest of the page is stored', async () => {
    const [first, second] = beta.devices as DattoDevice[];
    sim.updateDevice('sandbox-beta', first.uid, { deleted: true });
    sim.updateDevice('sandbox-beta', second.uid, { uid: '' as string });
    const { records } = await fetchAll('devices', ctx());
    expect(records).toHaveLength(beta.devices.length - 2);
  });
});

describe('Datto RMM connector: applications, incidents, packages', () => {
  it('reads each computer\'s software audit; a printer (400) and a device gone since the list (404) do not stop it', async () => {
    const audits = beta.software as DattoDeviceSoftware[];
    const { records } = await fetchAll('applications', ctx());
    expect(records).toHaveLength(audits.reduce((n, a) => n + a.software.length, 0));
    const one = audits[0];
    const r = records.find((x) => x.sourceId === `${one.deviceUid}:${one.software[0].name}:${one.software[0].version}`)!;
    expect(r.native).toEqual(one.software[0]);
    expect(r.fields).toEqual({ name: one.software[0].name, publisher: null, version: one.software[0].version, deviceSourceId: one.deviceUid, installedAt: null });
    expect(sim.faults.countRequests('/software')).toBe(audits.length);

    sim.faults.inject({ status: 404, times: 1, pathIncludes: `/audit/device/${audits[1].deviceUid}/software` });
    const again = (await fetchAll('applications', ctx())).records;
    expect(again).toHaveLength(records.length - audits[1].software.length);
  });

  it('fetches every open alert as an incident; resolved ones are not incidents', async () => {
    const open = (beta.alerts as DattoAlert[]).filter((a) => !a.resolved);
    const { records } = await fetchAll('incidents', ctx());
    expect(records.map((r) => r.sourceId).sort()).toEqual(open.map((a) => a.alertUid).sort());
    const a = open[0];
    expect(records.find((r) => r.sourceId === a.alertUid)!.fields).toEqual({
      message: a.diagnostics, severity: a.priority.toLowerCase(), deviceSourceId: a.alertSourceInfo.deviceUid, openedAt: new Date(a.timestamp),
    });
  });

  it('lists the components as packages; monitors are not runnable', async () => {
    const { records } = await fetchAll('packages', ctx());
    const components = beta.components as DattoComponent[];
    expect(records).toHaveLength(components.length);
    for (const c of components) {
      const r = records.find((x) => x.sourceId === c.uid)!;
      expect(r.native).toEqual(c);
      expect(r.fields).toMatchObject({ name: c.name, active: c.categoryCode !== 'monitors', operatingSystems: ['linux', 'mac', 'windows'] });
    }
  });

  it('declares the OS family of a device from its operating system', () => {
    expect(dattoRmmCapabilities.deviceOs!({ operatingSystem: 'Microsoft Windows 11 Pro 10.0.22631' })).toBe('windows');
    expect(dattoRmmCapabilities.deviceOs!({ operatingSystem: 'macOS Sonoma 14.5' })).toBe('mac');
    expect(dattoRmmCapabilities.deviceOs!({ operatingSystem: 'Ubuntu 22.04.4 LTS' })).toBe('linux');
    expect(dattoRmmCapabilities.deviceOs!({ operatingSystem: '' })).toBeNull();
  });
});

describe('Datto RMM connector: auth, platforms, permissions and resilience', () => {
  it('gets a token with the password grant of the public client, reuses it, and gets a new one when it stops working', async () => {
    await fetchAll('incidents', ctx());
    await fetchAll('incidents', ctx());
    expect(sim.faults.countRequests('/auth/oauth/token')).toBe(1);
    sim.faults.resetLog();
    sim.expireTokens();
    expect((await fetchAll('incidents', ctx())).records.length).toBeGreaterThan(0);
    expect(sim.faults.countRequests('/auth/oauth/token')).toBe(1);
  });

  it('fails with the vendor\'s refusal on a bad secret', async () => {
    const err = await fetchAll('devices', ctx('sandbox-beta', 'wrong')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VendorHttpError);
    expect((err as VendorHttpError).status).toBe(400);
    expect((err as VendorHttpError).body).toEqual({ error: 'invalid_grant', error_description: 'Bad credentials' });
  });

  it('knows the six platforms and where each one\'s token endpoint is', () => {
    expect(platformBaseUrl('syrah')).toBe('https://syrah-api.centrastage.net/api');
    expect(tokenUrl(platformBaseUrl('merlot'))).toBe('https://merlot-api.centrastage.net/auth/oauth/token');
    expect(platformOf('https://concord-api.centrastage.net/api')).toBe('concord');
    expect(platformOf(api())).toBeNull();
  });

  it('probes with one site and checks each permission with a read', async () => {
    await expect(dattoRmmConnector.probe(ctx())).resolves.toBeUndefined();
    const checks = await checkPermissions(ctx());
    expect(checks.map((c) => [c.capability, c.ok])).toEqual([['devices', true], ['incidents', true], ['applications', true], ['packages', true], ['device.deploy', true]]);
    sim.faults.inject({ status: 403, times: 1, pathIncludes: '/account/components' });
    const refused = await checkPermissions(ctx());
    expect(refused.filter((c) => !c.ok).map((c) => c.capability)).toEqual(['packages', 'device.deploy']);
    expect(sim.faults.requests.every((r) => r.method === 'GET' || r.path.endsWith('/auth/oauth/token'))).toBe(true);
  });

  it('retries a 429 and a burst of 503s and completes', async () => {
    sim.faults.inject({ status: 429, times: 1, pathIncludes: '/account/devices' });
    sim.faults.inject({ status: 503, times: 3, pathIncludes: '/account/alerts/open' });
    expect((await fetchAll('devices', ctx())).records).toHaveLength(beta.devices.length);
  });

  it('refuses resources Datto RMM does not have', async () => {
    await expect(fetchAll('tickets', ctx())).rejects.toThrow(/does not sync tickets/);
  });
});
