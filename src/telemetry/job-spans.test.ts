/**
 * A job's trace crosses the real queue (in-process, and BullMQ on Redis when REDIS_URL is set): a job
 * added under a span runs in a child span with the request id and tenant, a sync job starts a trace of
 * its own linked to its asker, and the handler never sees the carried context.
 */
import { context, trace, type Context } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { createJobQueue, JOB_NAMES, type JobName, type JobPayload } from '../../jobs/queue';
import { forgetRedisKeys, uniqueSuffix } from '../../test/support/runtime';
import { ScopeSpanProcessor, withScope } from './scope';
import { TracedJobQueue } from './job-spans';
import { inSpan } from './spans';

const redisUrl = process.env.REDIS_URL || undefined;
const prefix = `trace-test-${uniqueSuffix()}`;
const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new ScopeSpanProcessor(), new SimpleSpanProcessor(exporter)] });
let queue: TracedJobQueue;
const seen = new Map<string, JobPayload>();

beforeAll(async () => {
  provider.register();
  queue = new TracedJobQueue(createJobQueue({ redisUrl, prefix }));
  for (const name of JOB_NAMES) {
    queue.register(name, async (job) => {
      seen.set(job.id, job.data);
      // A span the handler makes is the job span's child.
      await inSpan('inside', {}, async () => undefined);
      return null;
    });
  }
  await queue.start();
});
afterAll(async () => {
  await queue.close();
  await forgetRedisKeys(redisUrl, `${prefix}:`);
  await provider.shutdown();
  trace.disable();
  context.disable();
});

const TENANT = '11111111-1111-4111-8111-111111111111';

/** Adds a job in `parent` and waits for it; answers its job span and the span made inside its handler. */
async function run(name: JobName, data: Record<string, unknown>, parent: Context): Promise<{ job: ReadableSpan; inside: ReadableSpan; id: string }> {
  const id = `${name.replace('.', '-')}-${uniqueSuffix()}`;
  await context.with(parent, () => queue.add(name, { tenantId: TENANT, ...data } as never, { jobId: id }));
  expect((await queue.waitFor(id, 10_000)).state).toBe('completed');
  const job = exporter.getFinishedSpans().find((s) => s.name === `job ${name}` && s.attributes['msp.job.id'] === id)!;
  const inside = exporter.getFinishedSpans().find((s) => s.name === 'inside' && s.parentSpanContext?.spanId === job.spanContext().spanId)!;
  expect(inside).toBeDefined();
  return { job, inside, id };
}

describe('job spans', () => {
  it('a job added inside a request runs in a child span carrying its request id and tenant; the handler gets its payload as added', async () => {
    await inSpan('request', { parent: withScope(context.active(), { requestId: 'req-7' }) }, async (request) => {
      const { job, inside, id } = await run('vendor.write', { connectionId: 'c1', write: { name: 'ticket.create', input: {} } }, context.active());
      expect(job.spanContext().traceId).toBe(request.spanContext().traceId);
      expect(job.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
      for (const s of [job, inside]) expect([s.attributes['msp.request_id'], s.attributes['msp.tenant_id']]).toEqual(['req-7', TENANT]);
      expect(seen.get(id)).toEqual({ tenantId: TENANT, connectionId: 'c1', write: { name: 'ticket.create', input: {} } });
    });
  });

  it('a sync job starts a trace of its own, linked to the request that asked for it', async () => {
    await inSpan('request', { parent: withScope(context.active(), { requestId: 'req-8' }) }, async (request) => {
      const { job, inside } = await run('sync.connection', { connectionId: 'c2' }, context.active());
      expect(job.parentSpanContext).toBeUndefined();
      expect(job.spanContext().traceId).not.toBe(request.spanContext().traceId);
      expect(job.links.map((l) => l.context.spanId)).toEqual([request.spanContext().spanId]);
      expect(inside.attributes['msp.request_id']).toBe('req-8');
    });
  });

  it('a job added outside any trace carries nothing and is a root', async () => {
    const { job, id } = await run('webhook.deliver', { webhookId: 'w1' }, context.active());
    expect(job.parentSpanContext).toBeUndefined();
    expect(job.links).toEqual([]);
    expect(job.attributes['msp.request_id']).toBeUndefined();
    expect(job.attributes['msp.tenant_id']).toBe(TENANT);
    expect(seen.get(id)).toEqual({ tenantId: TENANT, webhookId: 'w1' });
  });
});
