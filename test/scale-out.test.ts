/**
 * PostgreSQL + Redis only: the service scaled out, two api processes and two worker processes on one
 * database and one queue. Every ticket create is sent to both apis at once under one key while the
 * vendor holds its answers, one worker is killed in the middle of the writes and another started, and
 * every caller retries with its key until it gets an answer. At the end each key has exactly one ticket
 * at the vendor, and every answer for a key names that ticket.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { buildChildService, startChildService } from './support/child-service';
import { startTestService, type TestService } from './support/service';
import { forgetRedisKeys, runtime, uniqueSuffix } from './support/runtime';

const suite = runtime.redisUrl && runtime.databaseUrl ? describe : describe.skip;
const KEYS = 12;

suite('two api and two worker processes (BullMQ)', () => {
  const schema = `t_${uniqueSuffix()}`;
  const prefix = `scale-${uniqueSuffix()}`;
  const encryptionKey = randomBytes(32).toString('base64');
  const children: ChildProcess[] = [];
  let svc: TestService;
  let otherApi: string;
  // A dead process is noticed after three beats: 1.5 s. A vendor request may land up to 6 s after it was
  // sent (timeout plus margin): a take-over of a dead worker's write waits at most that after its send deadline.
  const shared = { INSTANCE_HEARTBEAT_MS: '500', WRITE_WAIT_MS: '20000', VENDOR_TIMEOUT_MS: '5000', VENDOR_LANDING_MARGIN_MS: '1000' };

  async function start(role: 'worker' | 'api') {
    const started = await startChildService({
      role, schema, queuePrefix: prefix, encryptionKey,
      env: { ...shared, SANDBOX: 'false', RATE_LIMIT_PER_MINUTE: '1000000', AUTH_FAILURES_PER_MINUTE: '1000000' },
    });
    children.push(started.child);
    return started;
  }

  beforeAll(async () => {
    buildChildService();
    await start('worker'); // runs the migrations first
    await start('worker');
    // The first api is this process (it hosts the vendor simulators); the second is a child.
    svc = await startTestService(
      { role: 'api', queuePrefix: prefix },
      { env: { ENCRYPTION_KEY: encryptionKey, ...shared }, database: { databaseUrl: runtime.databaseUrl, schema, dropSchemaOnClose: true } },
    );
    otherApi = (await start('api')).url;
  }, 180_000);

  afterAll(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await svc?.close();
    await forgetRedisKeys(runtime.redisUrl, `${prefix}:`);
  });

  async function post(base: string, body: unknown): Promise<{ status: number; body: any }> {
    const res = await fetch(`${base}/tenants/${svc.alphaId}/tickets`, {
      method: 'POST', headers: { 'x-api-key': svc.key, 'content-type': 'application/json' }, body: JSON.stringify(body),
    });
    return { status: res.status, body: await res.json().catch(() => null) };
  }

  it('ends with one ticket per key, whatever api took it and whichever worker died', async () => {
    const cw = svc.services.simulators!.connectwise as any;
    const companies = cw.list('sandbox-alpha', 'companies') as any[];
    const name = companies.find((c) => companies.filter((x) => x.name === c.name).length === 1).name;
    // The vendor does the first writes at once but holds their answers: they are in flight when a worker dies.
    cw.faults.inject({ status: 200, times: 6, method: 'POST', pathIncludes: '/service/tickets', holdResponseMs: 3000 });
    const run = `${uniqueSuffix()}`;
    const bodies = Array.from({ length: KEYS }, (_, i) => ({ company_name: name, summary: `Scale-out ${run} #${i}`, dry_run: false, idempotency_key: `scale-${run}-${i}` }));
    const apis = [svc.url, otherApi];
    const first = bodies.map((b) => Promise.all(apis.map((api) => post(api, b))));
    for (let i = 0; i < 200 && cw.faults.countRequests('/service/tickets', 'POST') < 3; i++) await new Promise((r) => setTimeout(r, 50));
    children[0].kill('SIGKILL');
    await start('worker');
    const answers = await Promise.all(first);

    const statuses: number[] = [];
    const refs = new Map<number, Set<string>>();
    for (let i = 0; i < KEYS; i++) {
      const got = [...answers[i]];
      // A caller without an answer yet retries with its key, on either api, until one comes.
      for (let tries = 0; tries < 80 && !got.some((a) => a.status < 300); tries++) {
        await new Promise((r) => setTimeout(r, 250));
        got.push(await post(apis[tries % 2], bodies[i]));
      }
      for (const a of got) {
        statuses.push(a.status);
        if (a.status < 300) refs.set(i, new Set([...(refs.get(i) ?? []), String(a.body.ticket_ref)]));
        else expect([409, 503]).toContain(a.status); // in progress, or the vendor write still in flight
      }
    }
    await new Promise((r) => setTimeout(r, 3500)); // past any held vendor answer
    const tickets = cw.list('sandbox-alpha', 'tickets') as any[];
    for (let i = 0; i < KEYS; i++) {
      const mine = tickets.filter((t) => t.summary === bodies[i].summary);
      expect([i, mine.length]).toEqual([i, 1]);
      expect([i, [...(refs.get(i) ?? [])]]).toEqual([i, [String(mine[0].id)]]);
    }
    expect(statuses.filter((s) => s >= 500 && s !== 503)).toEqual([]);
  }, 180_000);
});
