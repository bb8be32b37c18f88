/**
 * BullMQ runtime only: a worker process killed in the middle of a vendor write, and a new worker
 * started, still ends with exactly one ticket (the job is re-run after its lock expires, and the
 * re-run finds the ticket by its marker instead of creating it again), and with exactly one Datto RMM
 * quick job (found by the marker in its name, in the activity log).
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { DattoRmmSimulator } from '../src/simulators/dattormm/simulator';
import type { DattoDevice } from '../src/simulators/dattormm/types';
import { buildChildService, startChildService } from './support/child-service';
import { startTestService, type TestService } from './support/service';
import { forgetRedisKeys, runtime, uniqueSuffix } from './support/runtime';

const suite = runtime.redisUrl && runtime.databaseUrl ? describe : describe.skip;

suite('a worker killed mid-write (BullMQ)', () => {
  const schema = `t_${uniqueSuffix()}`;
  const prefix = `crash-${uniqueSuffix()}`;
  const encryptionKey = randomBytes(32).toString('base64');
  const workers: ChildProcess[] = [];
  let svc: TestService;

  // The vendor holds its answer 5 s: requests time out after 8 s and may land 2 s after that, so the new
  // worker's take-over waits for that instead of the defaults' minute.
  const vendorTiming = { VENDOR_TIMEOUT_MS: '8000', VENDOR_LANDING_MARGIN_MS: '2000' };

  async function startWorker(): Promise<ChildProcess> {
    const { child } = await startChildService({ role: 'worker', schema, queuePrefix: prefix, encryptionKey, env: vendorTiming });
    workers.push(child);
    return child;
  }

  beforeAll(async () => {
    buildChildService();
    await startWorker(); // runs the migrations first, then waits for jobs
    svc = await startTestService(
      { role: 'api', queuePrefix: prefix },
      { env: { ENCRYPTION_KEY: encryptionKey, ...vendorTiming }, database: { databaseUrl: runtime.databaseUrl, schema, dropSchemaOnClose: true } },
    );
  }, 180_000);

  afterAll(async () => {
    for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
    await svc?.close();
    await forgetRedisKeys(runtime.redisUrl, `${prefix}:`);
  });

  it('ends with one ticket after the worker is killed and another one starts', async () => {
    const cw = svc.services.simulators!.connectwise as any;
    const companies = cw.list('sandbox-alpha', 'companies') as any[];
    const name = companies.find((c) => companies.filter((x) => x.name === c.name).length === 1).name;
    // The vendor creates the ticket at once but holds its answer for 5 s: the worker is killed while the
    // write has landed and its outcome is unknown to us.
    cw.faults.inject({ status: 200, times: 1, method: 'POST', pathIncludes: '/service/tickets', holdResponseMs: 5000 });
    const answer = svc.api(`/tenants/${svc.alphaId}/tickets`, {
      method: 'POST', json: { company_name: name, summary: 'Survives a dead worker', dry_run: false, idempotency_key: `crash-${uniqueSuffix()}` },
    });
    for (let i = 0; i < 200 && !cw.faults.requests.some((r: any) => r.method === 'POST' && r.path.endsWith('/service/tickets')); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    await new Promise((r) => setTimeout(r, 200));
    expect((cw.list('sandbox-alpha', 'tickets') as any[]).filter((t) => t.summary === 'Survives a dead worker')).toHaveLength(1);
    workers[0].kill('SIGKILL');
    await startWorker();
    const res = await answer;
    expect(res.status).toBe(201);
    // The second worker found the ticket the first one had sent, instead of sending it again.
    expect(res.body.results[0].reconciled).toBe(true);
    expect((cw.list('sandbox-alpha', 'tickets') as any[]).filter((t) => t.summary === 'Survives a dead worker')).toHaveLength(1);
  }, 120_000);

  it('ends with one Datto RMM quick job after the worker is killed and another one starts', async () => {
    // The MSP turns deploy on for the sandbox ISV on beta's Datto RMM connection.
    const connectionId = (await svc.api(`/tenants/${svc.betaId}/connections`)).body.connections.find((c: any) => c.connector === 'dattormm').id;
    const grant = (await svc.api(`/tenants/${svc.betaId}/grants`, { key: svc.betaMspKey })).body.grants.find((g: any) => g.connection_id === connectionId);
    const put = await svc.api(`/tenants/${svc.betaId}/grants/${grant.isv_id}`, { key: svc.betaMspKey, method: 'PUT', json: { connections: [{ connection_id: connectionId, keys: [...grant.keys, 'rmm.device.write'] }] } });
    expect(put.status).toBe(200);
    const datto = svc.services.simulators!.dattormm as DattoRmmSimulator;
    const device = (datto.list('sandbox-beta', 'devices') as DattoDevice[]).find((d) => d.online && d.deviceClass === 'device' && /Windows/.test(d.operatingSystem ?? ''))!;
    const runs0 = datto.runs('sandbox-beta').length;
    // The vendor creates the job at once but holds its answer for 5 s.
    datto.faults.inject({ status: 200, times: 1, method: 'PUT', pathIncludes: '/quickjob', holdResponseMs: 5000 });
    const answer = svc.api(`/tenants/${svc.betaId}/devices/${device.uid}/deploy`, {
      method: 'POST', json: { package_name: 'Install 7-Zip', dry_run: false, idempotency_key: `crash-${uniqueSuffix()}` },
    });
    for (let i = 0; i < 200 && datto.runs('sandbox-beta').length === runs0; i++) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 200));
    expect(datto.runs('sandbox-beta').length).toBe(runs0 + 1);
    workers[workers.length - 1].kill('SIGKILL');
    await startWorker();
    const res = await answer;
    expect(res.status).toBe(200);
    // The new worker found the job the killed one had sent, instead of running it again.
    expect(res.body.reconciled).toBe(true);
    expect(datto.runs('sandbox-beta').length).toBe(runs0 + 1);
  }, 120_000);
});
