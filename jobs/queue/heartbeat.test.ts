/**
 * Both drivers beat once started (jobs/queue/heartbeat.ts) and age the oldest job nobody has taken
 * (JobCounts.oldestWaitingMs): before start no beat and a waiting job with an age; after, a beat and
 * nothing waiting. BullMQ runs when REDIS_URL is set.
 */
import { randomUUID } from 'node:crypto';
import { BullMqJobQueue } from './bullmq';
import { InProcessJobQueue } from './in-process';
import { JOB_NAMES, type JobQueue } from './types';
import { forgetRedisKeys, uniqueSuffix } from '../../test/support/runtime';

const quiet = { error: () => undefined, warn: () => undefined, info: () => undefined };
const redisUrl = process.env.REDIS_URL || undefined;
const prefix = `test-beat-${uniqueSuffix()}`;

const drivers: [string, () => JobQueue][] = [
  ['in-process', () => new InProcessJobQueue({ heartbeatMs: 50, logger: quiet as never })],
  ...(redisUrl ? [['bullmq', () => new BullMqJobQueue({ redisUrl, prefix, heartbeatMs: 50, logger: quiet as never })] as [string, () => JobQueue]] : []),
];

afterAll(async () => { await forgetRedisKeys(redisUrl, `${prefix}:`); });

describe.each(drivers)('%s', (_name, make) => {
  it('has no beat and ages a waiting job until started; then beats, and nothing waits', async () => {
    const queue = make();
    for (const name of JOB_NAMES) queue.register(name, async () => undefined);
    const deliveries = async () => (await queue.counts()).find((c) => c.name === 'webhook.deliver')!;
    try {
      await queue.add('webhook.deliver', { tenantId: randomUUID() } as never);
      await new Promise((r) => setTimeout(r, 20));
      expect(await queue.lastWorkerBeat()).toBeNull();
      const before = await deliveries();
      expect(before.waiting).toBe(1);
      expect(before.oldestWaitingMs).toBeGreaterThan(0);
      await queue.start();
      let beat = await queue.lastWorkerBeat();
      for (let i = 0; i < 50 && beat == null; i++) { await new Promise((r) => setTimeout(r, 20)); beat = await queue.lastWorkerBeat(); }
      expect(beat).not.toBeNull();
      let after = await deliveries();
      for (let i = 0; i < 100 && after.waiting > 0; i++) { await new Promise((r) => setTimeout(r, 20)); after = await deliveries(); }
      expect(after.oldestWaitingMs).toBeNull();
    } finally {
      await queue.close();
    }
  }, 30_000);
});
