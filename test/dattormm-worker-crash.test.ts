/**
 * BullMQ runtime only: a worker process killed in the middle of a Datto RMM deploy (the quick job has
 * landed, its answer has not), and a new worker started, still ends with exactly one quick job: the
 * re-run finds the job by the marker in its name (the activity log) instead of running it again.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { DattoRmmSimulator } from '../src/simulators/dattormm/simulator';
import type { DattoDevice } from '../src/simulators/dattormm/types';
import { buildChildService, startChildService } from './support/child-service';
import { startTestService, type TestService } from './support/service';
import { runtime, uniqueSuffix } from './support/runtime';

const suite = runtime.redisUrl && runtime.databaseUrl ? describe : describe.skip;

suite('a worker killed mid-deploy on Datto RMM (BullMQ)', () => {
  const schema = `t_${uniqueSuffix()}`;
  const prefix = `crash-${uniqueSuffix()}`;
  const encryptionKey = randomBytes(32).toString('base64');
  const workers: ChildProcess[] = [];
  let svc: TestService;

  // The vendor holds its answer 5 s: requests time out after 8 s and may land 2 s after that.
  const vendorTiming = { VENDOR_TIMEOUT_MS: '8000', VENDOR_LANDING_MARGIN_MS: '2000' };

  async function startWorker(): Promise<ChildProcess> {
    const { child } = await startChildService({ role: 'worker', schema, queuePrefix: prefix, encryptionKey, env: vendorTiming });
    workers.push(child);
    return child;
  }

  beforeAll(async () => {
    buildChildService();
    await startWorker();
    svc = await startTestService(
      { role: 'api', queuePrefix: prefix },
      { env: { ENCRYPTION_KEY: encryptionKey, ...vendorTiming }, database: { databaseUrl: runtime.databaseUrl, schema, dropSchemaOnClose: true } },
    );
    // The MSP turns deploy on for the sandbox ISV on beta's Datto RMM connection.
    const connectionId = (await svc.api(`/tenants/${svc.betaId}/connections`)).body.connections.find((c: any) => c.connector === 'dattormm').id;
    const isvId = (await svc.services.ds.query("SELECT id FROM isvs WHERE name = 'Sandbox ISV'"))[0].id;
    const keys = (await svc.api(`/tenants/${svc.betaId}/grants`, { key: svc.betaMspKey })).body.grants.find((g: any) => g.isv_id === isvId && g.connection_id === connectionId).keys;
    const put = await svc.api(`/tenants/${svc.betaId}/grants/${isvId}`, { key: svc.betaMspKey, method: 'PUT', json: { connections: [{ connection_id: connectionId, keys: [...keys, 'rmm.device.write'] }] } });
    expect(put.status).toBe(200);
  }, 180_000);

  afterAll(async () => {
    for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
    await svc?.close();
  });

  it('ends with one quick job after the worker is killed and another one starts', async () => {
    const datto = svc.services.simulators!.dattormm as DattoRmmSimulator;
    const device = (datto.list('sandbox-beta', 'devices') as DattoDevice[]).find((d) => d.online && d.deviceClass === 'device' && /Windows/.test(d.operatingSystem ?? ''))!;
    const runs0 = datto.runs('sandbox-beta').length;
    // The vendor creates the job at once but holds its answer for 5 s: the worker is killed while the
    // job has landed and its outcome is unknown to us.
    datto.faults.inject({ status: 200, times: 1, method: 'PUT', pathIncludes: '/quickjob', holdResponseMs: 5000 });
    const answer = svc.api(`/tenants/${svc.betaId}/devices/${device.uid}/deploy`, {
      method: 'POST', json: { package_name: 'Install 7-Zip', dry_run: false, idempotency_key: `crash-${uniqueSuffix()}` },
    });
    for (let i = 0; i < 200 && datto.runs('sandbox-beta').length === runs0; i++) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 200));
    expect(datto.runs('sandbox-beta').length).toBe(runs0 + 1);
    workers[0].kill('SIGKILL');
    await startWorker();
    const res = await answer;
    expect(res.status).toBe(200);
    // The second worker found the job the first one had sent, instead of running it again.
    expect(res.body.reconciled).toBe(true);
    expect(datto.runs('sandbox-beta').length).toBe(runs0 + 1);
  }, 120_000);
});
