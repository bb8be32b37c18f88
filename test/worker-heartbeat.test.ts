/**
 * Workers beat, and an api process says whether one runs (docs/architecture.md, Faults an operator will
 * meet): /readyz answers 503 naming the missing worker when none has beaten within
 * WORKER_HEARTBEAT_STALE_SECONDS, 200 once one beats; /metrics carries the heartbeat's age and the age
 * of each queue's oldest waiting job.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { loadConfig } from '../src/config/config';
import { startServer, type RunningServer } from '../src/server';
import { forgetRedisKeys, runtime, uniqueSuffix } from './support/runtime';
import { startTestService } from './support/service';

const onRedis = runtime.redisUrl ? it : it.skip;

async function readyz(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${url}/readyz`);
  return { status: res.status, body: await res.json() as Record<string, unknown> };
}

/** Polls /readyz until it answers `status` (bounded). */
async function readyzUntil(url: string, status: number): Promise<{ status: number; body: Record<string, unknown> }> {
  let last = await readyz(url);
  for (let i = 0; i < 100 && last.status !== status; i++) {
    await new Promise((r) => setTimeout(r, 100));
    last = await readyz(url);
  }
  return last;
}

/** A metric's value on a /metrics text, or null when the series is absent. */
function metric(text: string, series: string): number | null {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : null;
}

it('a process running its own worker (the default role) beats: /readyz is 200 and /metrics shows the beat and the queue ages', async () => {
  const svc = await startTestService({}, { env: { WORKER_HEARTBEAT_MS: '200' } });
  try {
    const ready = await readyz(svc.url);
    expect(ready).toMatchObject({ status: 200, body: { status: 'ready', worker: true } });
    expect(typeof ready.body.worker_heartbeat_age_seconds).toBe('number');
    const text = await (await fetch(`${svc.url}/metrics`)).text();
    expect(metric(text, `msp_worker_heartbeat_age_seconds{driver="${svc.services.queue.driver}"}`)).not.toBeNull();
    expect(metric(text, 'msp_queue_oldest_waiting_seconds{queue="vendor.write"}')).not.toBeNull();
  } finally {
    await svc.close();
  }
}, 120_000);

onRedis('an api process with no worker is not ready and names the worker; a worker beating makes it ready; its silence makes it not ready again', async () => {
  const schema = `t_${uniqueSuffix()}`;
  const queuePrefix = `test-hb-${uniqueSuffix()}`;
  const env = {
    ...process.env, LOG_LEVEL: 'silent', SANDBOX: 'false', SYNC_INTERVAL_SECONDS: '0', ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    ADMIN_TOKEN: `adm_test_${uniqueSuffix()}${uniqueSuffix()}`, WORKER_HEARTBEAT_MS: '200', WORKER_HEARTBEAT_STALE_SECONDS: '1',
  };
  const start = (role: 'api' | 'worker', dropSchemaOnClose: boolean) => startServer(
    loadConfig(env, { port: 0, ephemeral: true, queuePrefix, redisUrl: runtime.redisUrl, databaseUrl: runtime.databaseUrl, role }),
    { database: { databaseUrl: runtime.databaseUrl, schema, dropSchemaOnClose } },
  );
  let api: RunningServer | undefined;
  let worker: RunningServer | undefined;
  try {
    api = await start('api', true);
    const alone = await readyz(api.url);
    expect(alone).toMatchObject({ status: 503, body: { status: 'not_ready', database: true, queue: true, worker: false, missing: ['worker'] } });
    expect(alone.body.worker_heartbeat_age_seconds).toBeNull();
    // A job nobody takes: the queue's age shows it.
    await api.services.queue.add('sync.connection', { tenantId: randomUUID(), connectionId: randomUUID() });
    await new Promise((r) => setTimeout(r, 50));
    const waiting = await (await fetch(`${api.url}/metrics`)).text();
    expect(metric(waiting, 'msp_queue_oldest_waiting_seconds{queue="sync.connection"}')).toBeGreaterThan(0);
    expect(waiting).not.toContain('msp_worker_heartbeat_age_seconds{');

    worker = await start('worker', false);
    expect(await readyzUntil(api.url, 200)).toMatchObject({ status: 200, body: { status: 'ready', worker: true } });
    const served = await (await fetch(`${api.url}/metrics`)).text();
    expect(metric(served, 'msp_worker_heartbeat_age_seconds{driver="bullmq"}')).not.toBeNull();

    await worker.close();
    worker = undefined;
    expect(await readyzUntil(api.url, 503)).toMatchObject({ status: 503, body: { worker: false, missing: ['worker'] } });
  } finally {
    await worker?.close();
    await api?.close();
    await forgetRedisKeys(runtime.redisUrl, `${queuePrefix}:`);
  }
}, 180_000);
