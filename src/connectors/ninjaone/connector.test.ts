import { ninjaFixtures, useNinjaOneSimulator } from '../../../test/support/ninjaone-simulator';
import type { NinjaAlert, NinjaDevice, NinjaOrganization, NinjaOsPatch, NinjaSoftware } from '../../simulators/ninjaone/types';
import type { FetchedRecord, SyncContext, SyncResource } from '../types';
import { VendorHttpClient, VendorHttpError } from '../vendor-http';
import { ninjaOneConnector } from './connector';

const { sim, url: simUrl } = useNinjaOneSimulator();
const { alpha, beta } = ninjaFixtures;

function ctx(clientId = 'sandbox', clientSecret = 'sandbox-secret', since: Date | null = null): SyncContext {
  return { baseUrl: simUrl(), credentials: { clientId, clientSecret }, statusMapping: {}, since, http: new VendorHttpClient({ baseDelayMs: 10 }) };
}

async function fetchAll<R extends SyncResource>(resource: R, c: SyncContext): Promise<{ pages: number; records: FetchedRecord<R>[] }> {
  const records: FetchedRecord<R>[] = [];
  let pages = 0;
  for await (const page of ninjaOneConnector.fetch(resource, c)) {
    pages += 1;
    records.push(...page);
  }
  return { pages, records };
}

const PENDING = new Set(['MANUAL', 'APPROVED', 'FAILED']);

describe('NinjaOne connector: devices', () => {
  it('fetches every device verbatim with the derived flags right', async () => {
    const { records } = await fetchAll('devices', ctx());
    const devices = sim.list('sandbox-alpha', 'devices');
    expect(records).toHaveLength(devices.length);

    const orgs = new Map((alpha.organizations as NinjaOrganization[]).map((o) => [o.id, o.name]));
    const alerting = new Set((alpha.alerts as NinjaAlert[]).map((a) => a.deviceId));
    const patches = alpha['os-patches'] as NinjaOsPatch[];
    for (const d of devices) {
      const r = records.find((x) => x.sourceId === String(d.id));
      expect(r).toBeDefined();
      expect(r!.native).toEqual(d);
      expect(r!.vendorUpdatedAt).toEqual(new Date(d.lastUpdate! * 1000));
      expect(r!.fields).toEqual({
        hostname: d.systemName,
        companyName: orgs.get(d.organizationId),
        companySourceId: String(d.organizationId),
        os: d.os!.name,
        online: !d.offline,
        needsAttention: alerting.has(d.id),
        patchesPending: patches.filter((p) => p.deviceId === d.id && PENDING.has(p.status)).length,
        lastContactAt: new Date(d.lastContact! * 1000),
      });
    }
    // The fixtures exercise every flag both ways.
    const f = records.map((r) => r.fields);
    expect(f.some((x) => !x.online) && f.some((x) => x.online)).toBe(true);
    expect(f.some((x) => x.needsAttention) && f.some((x) => !x.needsAttention)).toBe(true);
    expect(f.some((x) => x.patchesPending > 1) && f.some((x) => x.patchesPending === 0)).toBe(true);
    // A device whose only patches were rejected has nothing pending.
    const rejectedOnly = devices.find((d) => patches.some((p) => p.deviceId === d.id) && patches.filter((p) => p.deviceId === d.id).every((p) => p.status === 'REJECTED'));
    expect(rejectedOnly).toBeDefined();
    expect(records.find((r) => r.sourceId === String(rejectedOnly!.id))!.fields.patchesPending).toBe(0);
  });

  it('sees a device go offline and an alert raised and cleared on the next fetch', async () => {
    const target = (alpha.devices as NinjaDevice[]).find((d) => !d.offline && !(alpha.alerts as NinjaAlert[]).some((a) => a.deviceId === d.id))!;
    sim.update('sandbox-alpha', 'devices', target.id, { offline: true });
    const raised = sim.raiseAlert('sandbox-alpha', target.id, 'Device went offline');
    let r = (await fetchAll('devices', ctx())).records.find((x) => x.sourceId === String(target.id))!;
    expect(r.fields.online).toBe(false);
    expect(r.fields.needsAttention).toBe(true);
    expect(r.vendorUpdatedAt!.getTime()).toBeGreaterThan(target.lastUpdate! * 1000);

    sim.clearAlert('sandbox-alpha', raised.uid);
    r = (await fetchAll('devices', ctx())).records.find((x) => x.sourceId === String(target.id))!;
    expect(r.fields.needsAttention).toBe(false);
  });

  it('pages more devices than one page holds, with flags from paged reports', async () => {
    sim.grow('load', 'devices', 2_500);
    sim.grow('load', 'os-patches', 2_100);
    sim.grow('load', 'alerts', 30);
    const { pages, records } = await fetchAll('devices', ctx('load', 'load-secret'));
    expect(pages).toBe(3);
    expect(records).toHaveLength(2_500);
    expect(new Set(records.map((r) => r.sourceId)).size).toBe(2_500);
    const pendingRows = sim.list('load', 'os-patches').filter((p) => PENDING.has(p.status)).length;
    expect(records.reduce((n, r) => n + r.fields.patchesPending, 0)).toBe(pendingRows);
    expect(records.filter((r) => r.fields.needsAttention)).toHaveLength(new Set(sim.list('load', 'alerts').map((a) => a.deviceId)).size);
  });

  it('reads everything even when a watermark is given (NinjaOne has no last-updated filter)', async () => {
    expect(ninjaOneConnector.incremental).toEqual([]);
    const { records } = await fetchAll('devices', ctx('sandbox', 'sandbox-secret', new Date()));
    expect(records).toHaveLength(alpha.devices.length);
  });
});

describe('NinjaOne connector: applications and incidents', () => {
  it('fetches every installed application verbatim', async () => {
    const { records } = await fetchAll('applications', ctx());
    const rows = sim.list('sandbox-alpha', 'software');
    expect(records).toHaveLength(rows.length);
    expect(new Set(records.map((r) => r.sourceId)).size).toBe(rows.length);
    for (const row of rows) {
      const r = records.find((x) => x.sourceId === `${row.deviceId}:${row.name}:${row.version}`);
      expect(r).toBeDefined();
      expect(r!.native).toEqual(row);
      expect(r!.fields).toEqual({
        name: row.name,
        publisher: row.publisher,
        version: row.version,
        deviceSourceId: String(row.deviceId),
        installedAt: row.installDate!.slice(0, 10),
      });
      expect(r!.fields.installedAt).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(r!.vendorUpdatedAt).toEqual(new Date(row.timestamp! * 1000));
    }
  });

  it('follows the software cursor over several pages', async () => {
    sim.grow('load', 'devices', 50);
    sim.grow('load', 'software', 2_345);
    const { pages, records } = await fetchAll('applications', ctx('load', 'load-secret'));
    expect(pages).toBe(3);
    expect(records.map((r) => r.native)).toEqual(sim.list('load', 'software') as NinjaSoftware[]);
  });

  it('fetches every active alert as an incident', async () => {
    const { records } = await fetchAll('incidents', ctx());
    const alerts = sim.list('sandbox-alpha', 'alerts');
    expect(records).toHaveLength(alerts.length);
    for (const a of alerts) {
      const r = records.find((x) => x.sourceId === a.uid)!;
      expect(r.native).toEqual(a);
      expect(r.fields).toEqual({
        message: a.message,
        severity: null,
        deviceSourceId: String(a.deviceId),
        openedAt: new Date(a.createTime * 1000),
      });
    }
  });
});

describe('NinjaOne connector: tenants, auth and resilience', () => {
  it('returns each instance its own data', async () => {
    const a = (await fetchAll('devices', ctx('sandbox'))).records;
    const b = (await fetchAll('devices', ctx('sandbox-beta'))).records;
    expect(b).toHaveLength(beta.devices.length);
    const aIds = new Set(a.map((r) => r.sourceId));
    expect(b.some((r) => aIds.has(r.sourceId))).toBe(false);
    const aCompanies = new Set(a.map((r) => r.fields.companyName));
    expect(b.some((r) => aCompanies.has(r.fields.companyName))).toBe(false);
  });

  it('reuses its token and gets a new one when the vendor stops accepting it', async () => {
    await fetchAll('incidents', ctx());
    await fetchAll('incidents', ctx());
    expect(sim.faults.countRequests('/ws/oauth/token')).toBeLessThanOrEqual(1);

    sim.faults.resetLog();
    sim.expireTokens();
    const { records } = await fetchAll('incidents', ctx());
    expect(records).toHaveLength(alpha.alerts.length);
    expect(sim.faults.countRequests('/ws/oauth/token')).toBe(1);
  });

  it('fails with the vendor 401 on bad credentials', async () => {
    const err = await fetchAll('devices', ctx('sandbox', 'wrong-secret')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VendorHttpError);
    expect((err as VendorHttpError).status).toBe(401);
  });

  it('retries a 429 with Retry-After 1 and completes', async () => {
    sim.faults.inject({ status: 429, times: 1, retryAfterSeconds: 1, pathIncludes: '/v2/devices-detailed' });
    const { records } = await fetchAll('devices', ctx());
    expect(records).toHaveLength(alpha.devices.length);
    expect(sim.faults.countRequests('/v2/devices-detailed')).toBe(2);
  });

  it('retries a burst of three 503s and completes', async () => {
    sim.faults.inject({ status: 503, times: 3, pathIncludes: '/v2/queries/software' });
    const { records } = await fetchAll('applications', ctx());
    expect(records).toHaveLength(alpha.software.length);
    expect(sim.faults.countRequests('/v2/queries/software')).toBe(4);
  });

  it('refuses resources NinjaOne does not have', async () => {
    await expect(fetchAll('tickets', ctx())).rejects.toThrow(/does not sync tickets/);
  });
});

describe('NinjaOne connector: packages (the automation script catalogue)', () => {
  it('maps every script verbatim with its OS families, per instance', async () => {
    const { records } = await fetchAll('packages', ctx());
    const scripts = sim.list('sandbox-alpha', 'scripts');
    expect(records.map((r) => r.native)).toEqual(scripts);
    const chrome = records.find((r) => r.sourceId === '302')!;
    expect(chrome.fields).toEqual({ name: 'Install Google Chrome', description: scripts.find((s) => s.id === 302)!.description, operatingSystems: ['mac', 'windows'], active: true });
    expect(records.find((r) => r.sourceId === '306')!.fields.active).toBe(false);
    const betaIds = (await fetchAll('packages', ctx('sandbox-beta'))).records.map((r) => r.sourceId);
    expect(betaIds).toEqual((beta.scripts as { id: number }[]).map((s) => String(s.id)));
  });
});
