/**
 * Every RMM reads its open alerts (N-central: its active issues) for the devices' alert flag and for the incidents. A sync that checks
 * both resources (a scheduled check claims them together: both are due every few seconds) reads the
 * alerts once and gives both the same answer; a sync of one resource reads them itself.
 */
import { Connection, DeviceRecord, IncidentRecord } from '../entities';
import { SyncFailedError } from '../src/sync/sync.service';
import { startTestService, type TestService } from './support/service';

let svc: TestService;
beforeAll(async () => { svc = await startTestService(); }, 120_000);
afterAll(async () => { await svc?.close(); });

const cases = [
  { connector: 'ninjaone', alertsPath: '/v2/alerts', tenant: () => svc.betaId },
  { connector: 'dattormm', alertsPath: '/v2/account/alerts/open', tenant: () => svc.betaId },
  { connector: 'ncentral', alertsPath: '/active-issues', tenant: () => svc.gammaId },
] as const;

describe.each(cases)('$connector', ({ connector, alertsPath, tenant }) => {
  it('a sync of devices and incidents reads the open alerts once, and both agree with them', async () => {
    const [conn] = await svc.services.ds.getRepository(Connection).findBy({ tenantId: tenant(), connector });
    expect(conn).toBeDefined();
    const sim = svc.services.simulators![connector];
    sim.faults.resetLog();
    const report = await svc.services.sync.syncConnection(conn.id, { resources: ['devices', 'incidents'], full: true });
    expect(report.ok).toBe(true);
    expect(sim.faults.countRequests(alertsPath, 'GET')).toBe(1);

    // The devices flagged are the devices of the stored incidents: both came from the one read.
    const incidents = await svc.services.ds.getRepository(IncidentRecord).findBy({ connectionId: conn.id });
    const devices = await svc.services.ds.getRepository(DeviceRecord).findBy({ connectionId: conn.id });
    expect(incidents.length).toBeGreaterThan(0);
    const withIncident = new Set(incidents.map((i) => i.deviceSourceId).filter((id) => id != null));
    const flagged = new Set(devices.filter((d) => d.needsAttention).map((d) => d.sourceId));
    expect([...flagged].sort()).toEqual([...withIncident].filter((id) => devices.some((d) => d.sourceId === id)).sort());

    // Each resource alone reads them itself.
    sim.faults.resetLog();
    await svc.services.sync.syncConnection(conn.id, { resources: ['incidents'] });
    await svc.services.sync.syncConnection(conn.id, { resources: ['devices'], full: true });
    expect(sim.faults.countRequests(alertsPath, 'GET')).toBe(2);
  }, 60_000);

  it('a failed alerts read fails its sync as before, and the next sync reads them afresh', async () => {
    const [conn] = await svc.services.ds.getRepository(Connection).findBy({ tenantId: tenant(), connector });
    const sim = svc.services.simulators![connector];
    sim.faults.resetLog();
    // One refusal the client does not retry (a 400), on the first alerts read only.
    sim.faults.inject({ status: 400, times: 1, pathIncludes: alertsPath, method: 'GET' });
    const failed = await svc.services.sync.syncConnection(conn.id, { resources: ['devices', 'incidents'], full: true }).catch((err: unknown) => err);
    sim.faults.clear();
    expect(failed).toBeInstanceOf(SyncFailedError);
    expect((failed as SyncFailedError).report.error).toMatch(/^devices: /);
    const next = await svc.services.sync.syncConnection(conn.id, { resources: ['devices', 'incidents'], full: true });
    expect(next.ok).toBe(true);
    expect(sim.faults.countRequests(alertsPath, 'GET')).toBe(2);
  }, 60_000);
});
