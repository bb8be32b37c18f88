/**
 * Datto RMM end to end, on sandbox-beta's Datto RMM connection (beyond its NinjaOne one): the same
 * lists, events, health rows, deletions and deploy as NinjaOne's (docs/architecture.md, Device write and
 * ask), over HTTP against the Datto RMM simulator. The sandbox ISV's rmm.device.write is off on beta;
 * the MSP turns it on for the Datto RMM connection here.
 */
import type { DattoRmmSimulator } from '../src/simulators/dattormm/simulator';
import type { DattoComponent, DattoDevice } from '../src/simulators/dattormm/types';
import { startTestService, type TestService } from './support/service';

let svc: TestService;
let datto: DattoRmmSimulator;
let connectionId: string;
const BETA = 'sandbox-beta';

beforeAll(async () => {
  svc = await startTestService();
  datto = svc.services.simulators!.dattormm as DattoRmmSimulator;
  const connections = (await svc.api(`/tenants/${svc.betaId}/connections`)).body.connections;
  connectionId = connections.find((c: any) => c.connector === 'dattormm').id;
  const isvId = (await svc.services.ds.query("SELECT id FROM isvs WHERE name = 'Sandbox ISV'"))[0].id;
  const current = (await svc.api(`/tenants/${svc.betaId}/grants`, { key: svc.betaMspKey })).body.grants.find((g: any) => g.isv_id === isvId && g.connection_id === connectionId).keys;
  const put = await svc.api(`/tenants/${svc.betaId}/grants/${isvId}`, {
    key: svc.betaMspKey, method: 'PUT', json: { connections: [{ connection_id: connectionId, keys: [...current, 'rmm.device.write'] }] },
  });
  expect(put.status).toBe(200);
}, 120_000);
afterAll(async () => { await svc?.close(); });

let keySeq = 0;
const newKey = () => `datto-${Date.now()}-${keySeq++}`;
const devicesOf = () => datto.list(BETA, 'devices') as DattoDevice[];
const component = (name: string) => (datto.list(BETA, 'components') as DattoComponent[]).find((c) => c.name === name)!;
const deploy = (device: string, json: Record<string, unknown>) => svc.api(`/tenants/${svc.betaId}/devices/${encodeURIComponent(device)}/deploy`, { method: 'POST', json });
const jobPuts = () => datto.faults.countRequests('/quickjob', 'PUT');

async function sync(): Promise<void> {
  const res = await svc.api(`/tenants/${svc.betaId}/sync`, { method: 'POST', json: {} });
  expect(res.body.ok).toBe(true);
}
async function feed(kind?: string): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 50; pages++) {
    const q = new URLSearchParams({ limit: '500', ...(kind ? { kind } : {}), ...(cursor ? { cursor } : {}) });
    const res = await svc.api(`/tenants/${svc.betaId}/connections/events?${q}`);
    out.push(...res.body.events);
    cursor = res.body.next_cursor;
    if (!cursor) return out;
  }
  throw new Error('feed did not end');
}
async function eventsOf(change: () => unknown): Promise<any[]> {
  const seen = new Set((await feed()).map((e) => e.id));
  await change();
  await sync();
  return (await feed()).filter((e) => !seen.has(e.id) && e.vendor === 'dattormm');
}
async function readAll(list: string): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 50; i++) {
    const res = await svc.api(`/tenants/${svc.betaId}/${list}?limit=500${cursor ? `&cursor=${cursor}` : ''}`);
    expect(res.status).toBe(200);
    out.push(...res.body[list]);
    cursor = res.body.next_cursor;
    if (!cursor) return out;
  }
  throw new Error('list did not end');
}

describe('sync: lists from Datto RMM beside NinjaOne', () => {
  it('devices, applications, incidents and packages carry the vendor payload and the canonical fields', async () => {
    const devices = (await readAll('devices')).filter((d) => d.source === 'dattormm');
    expect(devices).toHaveLength(devicesOf().length);
    const d = devicesOf().find((x) => x.deviceClass === 'device' && x.online)!;
    const row = devices.find((x) => x.source_id === d.uid);
    expect(row).toMatchObject({ hostname: d.hostname, company_name: d.siteName, online: true, vendor: { connector: 'dattormm', native_id: d.uid } });
    expect(row.raw).toEqual(d);
    expect((await readAll('applications')).filter((a) => a.source === 'dattormm').length).toBeGreaterThan(devices.length * 3);
    expect((await readAll('incidents')).filter((i) => i.source === 'dattormm').length).toBeGreaterThan(0);
    expect((await readAll('packages')).filter((p) => p.source === 'dattormm').map((p) => p.name)).toContain('Install 7-Zip');
  });
});

describe('events and health rows', () => {
  it('a device going offline gives device.updated; an alert gives attention_needed and its resolution resolved', async () => {
    const d = devicesOf().find((x) => x.deviceClass === 'device' && x.online && x.hostname.startsWith('CSA'))!;
    const offline = await eventsOf(() => datto.updateDevice(BETA, d.uid, { online: false }));
    expect(offline.map((e) => e.kind)).toEqual(['device.updated']);
    expect(offline[0]).toMatchObject({ vendor_id: d.uid, summary: `Device ${d.hostname} went offline` });

    let alertUid = '';
    const raised = await eventsOf(() => { alertUid = datto.raiseAlert(BETA, d.uid, 'Device offline').alertUid; });
    expect(raised.map((e) => [e.kind, e.type])).toEqual([['device.updated', null], ['health', 'attention_needed']]);
    const resolved = await eventsOf(() => expect(datto.resolveAlert(BETA, alertUid)).toBe(true));
    expect(resolved.map((e) => [e.kind, e.type])).toEqual([['device.updated', null], ['health', 'resolved']]);
  });

  it('an agent check-in and audit alone is not a change', async () => {
    const d = devicesOf()[3];
    expect(await eventsOf(() => datto.updateDevice(BETA, d.uid, { lastSeen: new Date().toISOString() }))).toEqual([]);
  });

  it('a device removed at the vendor leaves the list with one device.deleted, and its applications with it', async () => {
    const d = devicesOf().find((x) => x.deviceClass === 'device' && x.hostname.startsWith('MFF'))!;
    const events = await eventsOf(() => expect(datto.removeDevice(BETA, d.uid)).toBe(true));
    expect(events.filter((e) => e.kind === 'device.deleted').map((e) => e.vendor_id)).toEqual([d.uid]);
    expect((await readAll('devices')).some((x) => x.source_id === d.uid)).toBe(false);
    expect((await readAll('applications')).some((a) => a.source === 'dattormm' && a.device_source_id === d.uid)).toBe(false);
  });
});

describe('deploy: a component run as a quick job, once per key', () => {
  const target = () => devicesOf().find((x) => x.deviceClass === 'device' && x.online && /Windows/.test(x.operatingSystem ?? '') && x.hostname.startsWith('SVV'))!;

  it('a preview shows the exact quick job, its name carrying the marker, and sends nothing', async () => {
    const d = target();
    const p0 = jobPuts();
    const res = await deploy(d.uid, { package_name: 'Install 7-Zip', idempotency_key: 'preview-key' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ dry_run: true, device_source_id: d.uid, package_source_id: component('Install 7-Zip').uid, os: 'windows', queued: false });
    const [request] = res.body.preview.targets[0].requests;
    expect(request).toMatchObject({ method: 'PUT', path: `/v2/device/${d.uid}/quickjob`, body: { jobComponent: { componentUid: component('Install 7-Zip').uid, variables: [] } } });
    expect(request.body.jobName).toMatch(/^Deploy Install 7-Zip \[ref:msp-[0-9a-f]{24}\]$/);
    expect(jobPuts()).toBe(p0);
  });

  it('a commit runs once; a replay runs nothing; ten concurrent commits with one key run once', async () => {
    const d = target();
    const r0 = datto.runs(BETA).length;
    const body = { package_name: 'Install Mozilla Firefox', idempotency_key: newKey(), dry_run: false };
    const res = await deploy(d.uid, body);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ dry_run: false, connector: 'dattormm', queued: false, reconciled: false });
    expect((await deploy(d.uid, body)).body.idempotent_replay).toBe(true);
    const many = { package_name: 'Install Google Chrome', idempotency_key: newKey(), dry_run: false };
    const answers = await Promise.all(Array.from({ length: 10 }, () => deploy(d.uid, many)));
    expect(answers.filter((a) => a.status === 200 && !a.body.idempotent_replay)).toHaveLength(1);
    expect(datto.runs(BETA).length).toBe(r0 + 2);
  });

  it('under a 429 storm on the quick job: one run, or a 429 that a retry with the same key finishes with one run', async () => {
    const d = target();
    const r0 = datto.runs(BETA).length;
    datto.faults.inject({ status: 429, times: 4, pathIncludes: '/quickjob', method: 'PUT' });
    const body = { package_name: 'Install Zoom Workplace', idempotency_key: newKey(), dry_run: false };
    let res = await deploy(d.uid, body);
    for (let i = 0; i < 10 && res.status !== 200; i++) {
      expect([429, 503]).toContain(res.status);
      res = await deploy(d.uid, body);
    }
    expect(res.status).toBe(200);
    expect(datto.runs(BETA).length).toBe(r0 + 1);
    datto.faults.clear();
  });

  it('a quick job the vendor accepted whose answer was lost is found by its marker in the activity log, not run again', async () => {
    const d = target();
    const r0 = datto.runs(BETA).length;
    datto.faults.inject({ status: 200, times: 1, pathIncludes: '/quickjob', method: 'PUT', afterHandler: 'drop' });
    const res = await deploy(d.uid, { package_name: 'Clear Temporary Files', idempotency_key: newKey(), dry_run: false });
    expect(res.status).toBe(200);
    expect(res.body.reconciled).toBe(true);
    expect(datto.runs(BETA).length).toBe(r0 + 1);
    expect(datto.faults.countRequests('/activity-logs')).toBeGreaterThan(0);
  });

  it('an offline device answers queued; the job runs when it comes back', async () => {
    const d = devicesOf().find((x) => x.deviceClass === 'device' && !x.online && /Windows/.test(x.operatingSystem ?? ''))!;
    const res = await deploy(d.uid, { package_name: 'Restart Print Spooler', idempotency_key: newKey(), dry_run: false });
    expect(res.body).toMatchObject({ dry_run: false, queued: true });
    const run = datto.runs(BETA).at(-1)!;
    expect([run.deviceUid, run.done]).toEqual([d.uid, false]);
    datto.updateDevice(BETA, d.uid, { online: true });
    expect(datto.runs(BETA).at(-1)!.done).toBe(true);
  });

  it('a monitor component is not runnable: 422 naming package_name, nothing sent', async () => {
    const p0 = jobPuts();
    const res = await deploy(target().uid, { package_name: 'Disk Space Monitor', idempotency_key: newKey(), dry_run: false });
    expect([res.status, res.body.details?.field]).toEqual([422, 'package_name']);
    expect(jobPuts()).toBe(p0);
  });
});
