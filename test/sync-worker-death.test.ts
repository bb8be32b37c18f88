/**
 * PostgreSQL + Redis only: two api processes and one worker, the worker killed
 * (SIGKILL) in the middle of a sync and another started 2 s later. A caller waiting on `POST .../sync`
 * gets its documented answer: the result (200) once another worker has taken the dead one's jobs over, or,
 * past SYNC_WAIT_MS, 202 with the sync to poll; polling it (on either api) ends with the whole sync, ok.
 * The worker runs the queue's default lock and stalled-check times, as deployed.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { buildChildService, startChildService } from './support/child-service';
import { startTestService, type TestService } from './support/service';
import { forgetRedisKeys, runtime, uniqueSuffix } from './support/runtime';

const suite = runtime.redisUrl && runtime.databaseUrl ? describe : describe.skip;

suite('a worker killed mid-sync, two api processes (BullMQ)', () => {
  const schema = `t_${uniqueSuffix()}`;
  const prefix = `syncdeath-${uniqueSuffix()}`;
  const encryptionKey = randomBytes(32).toString('base64');
  const children: ChildProcess[] = [];
  let svc: TestService;
  let otherApi: string;

  async function start(role: 'worker' | 'api'): Promise<ChildProcess> {
    const started = await startChildService({
      role, schema, queuePrefix: prefix, encryptionKey,
      // The deployed defaults for the take-over (jobs/queue/bullmq.ts), not the crash tests' short ones.
      env: { SANDBOX: 'false', RATE_LIMIT_PER_MINUTE: '1000000', AUTH_FAILURES_PER_MINUTE: '1000000', QUEUE_LOCK_MS: undefined, QUEUE_STALLED_MS: undefined } as unknown as Record<string, string>,
    });
    children.push(started.child);
    if (role === 'api') otherApi = started.url;
    return started.child;
  }

  beforeAll(async () => {
    buildChildService();
    await start('worker'); // runs the migrations first
    // The first api is this process (it hosts the vendor simulators) and waits 2 s; the second (a child) the default 60 s.
    svc = await startTestService(
      { role: 'api', queuePrefix: prefix },
      { env: { ENCRYPTION_KEY: encryptionKey, SYNC_WAIT_MS: '2000' }, database: { databaseUrl: runtime.databaseUrl, schema, dropSchemaOnClose: true } },
    );
    await start('api');
  }, 180_000);

  afterAll(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await svc?.close();
    await forgetRedisKeys(runtime.redisUrl, `${prefix}:`);
  });

  async function call(base: string, method: 'GET' | 'POST', path: string): Promise<{ status: number; body: any }> {
    const res = await fetch(`${base}${path}`, {
      method, headers: { 'x-api-key': svc.key, 'content-type': 'application/json' }, body: method === 'POST' ? '{}' : undefined,
    });
    return { status: res.status, body: await res.json() };
  }

  /** Polls a running sync on `base` until it answers 200 (each poll waits up to that api's SYNC_WAIT_MS). */
  async function pollToEnd(base: string, running: { poll: string; sync_id: string }): Promise<any> {
    for (let i = 0; i < 60; i++) {
      const res = await call(base, 'GET', running.poll);
      if (res.status === 200) return res.body;
      expect(res).toMatchObject({ status: 202, body: { status: 'running', sync_id: running.sync_id } });
      await new Promise((r) => setTimeout(r, 1000));
    }
    throw new Error(`sync ${running.sync_id} never finished`);
  }

  it('answers each waiting caller as documented, and the dead worker\'s sync is taken over', async () => {
    const cw = svc.services.simulators!.connectwise as any;
    // ConnectWise is slow to answer the ticket listing: the worker is busy with it when it dies.
    cw.faults.inject({ status: 200, times: 2, method: 'GET', pathIncludes: '/service/tickets', holdRequestMs: 4000 });
    const before = cw.faults.countRequests('/service/tickets', 'GET');
    const shortWait = svc.api(`/tenants/${svc.alphaId}/sync`, { method: 'POST', json: {} });
    const longWait = call(otherApi, 'POST', `/tenants/${svc.alphaId}/sync`);
    for (let i = 0; i < 400 && cw.faults.countRequests('/service/tickets', 'GET') === before; i++) await new Promise((r) => setTimeout(r, 25));
    expect(cw.faults.countRequests('/service/tickets', 'GET')).toBeGreaterThan(before);
    children[0].kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 2000));
    await start('worker');

    // The caller on the api that waits 2 s: 202, the sync to poll (checked against /openapi.json by svc.api).
    const short = await shortWait;
    expect(short).toMatchObject({ status: 202, body: { status: 'running', tenant_id: svc.alphaId, poll: `/tenants/${svc.alphaId}/sync/${short.body.sync_id}` } });
    // The caller on the api that waits 60 s: the result, or (a slow take-over) the sync to poll.
    const long = await longWait;
    expect([200, 202]).toContain(long.status);

    // Polled on the other api than the one that started it: the whole sync, every connection ok.
    const shortResult = await pollToEnd(otherApi, short.body);
    const longResult = long.status === 200 ? long.body : await pollToEnd(svc.url, long.body);
    for (const result of [shortResult, longResult]) {
      expect(result).toMatchObject({ tenant_id: svc.alphaId, ok: true });
      expect(result.connections.map((c: any) => c.connector).sort()).toEqual(['connectwise', 'ninjaone', 'pax8']);
      expect(result.connections.every((c: any) => c.ok)).toBe(true);
    }
    expect(shortResult.sync_id).toBe(short.body.sync_id);
    // A sync id nobody started is 404.
    expect((await svc.api(`/tenants/${svc.alphaId}/sync/00000000-0000-4000-8000-000000000000`)).status).toBe(404);
  }, 180_000);
});
