/**
 * Traces across the job queue, the same for BullMQ and the in-process driver: `add` writes the current
 * trace context (W3C traceparent) and request id into the payload's `trace` field, and each try of a
 * job runs in a span of its own under that context, with the field taken out again before the handler
 * sees the payload. A `sync.connection` job is a trace of its own (a root span, linked to the request
 * that asked for it, if one did): a sync's many vendor calls and the webhook deliveries its changes wake
 * are the sync's, not the asking request's. Used only when tracing is on (src/server.ts).
 */
import { context, propagation, ROOT_CONTEXT, SpanKind, trace, type Context, type Link } from '@opentelemetry/api';
import type { JobTrace } from '../../jobs/queue/job';
import type { AddJobOptions, JobContext, JobHandler, JobName, JobPayload, JobPayloads, JobQueue } from '../../jobs/queue/types';
import { scopeOf, withScope } from './scope';
import { inSpan } from './spans';

/** Jobs that start a trace of their own. */
const ROOT_JOBS: ReadonlySet<JobName> = new Set<JobName>(['sync.connection']);

/** The trace context of `ctx` as a payload carries it; undefined when there is none. */
export function jobTraceOf(ctx: Context): JobTrace | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  const { requestId } = scopeOf(ctx);
  const t: JobTrace = {
    ...(carrier.traceparent ? { traceparent: carrier.traceparent } : {}),
    ...(carrier.tracestate ? { tracestate: carrier.tracestate } : {}),
    ...(requestId ? { requestId } : {}),
  };
  return Object.keys(t).length > 0 ? t : undefined;
}

/** Where a job's try starts: under the context it was added in, or at a new root linked to it. */
function parentOf(name: JobName, data: JobPayload): { parent: Context; links: Link[] } {
  const carried = data.trace;
  const added = carried ? propagation.extract(ROOT_CONTEXT, { traceparent: carried.traceparent, tracestate: carried.tracestate }) : ROOT_CONTEXT;
  const scope = { requestId: carried?.requestId, tenantId: data.tenantId };
  const addedSpan = trace.getSpanContext(added);
  if (ROOT_JOBS.has(name)) return { parent: withScope(ROOT_CONTEXT, scope), links: addedSpan ? [{ context: addedSpan }] : [] };
  return { parent: withScope(added, scope), links: [] };
}

export function tracedHandler<N extends JobName, R>(name: N, handler: JobHandler<JobPayloads[N], R>): JobHandler<JobPayloads[N], R> {
  return (job: JobContext<JobPayloads[N]>) => {
    const { trace: _carried, ...data } = job.data as JobPayloads[N] & JobPayload;
    const { parent, links } = parentOf(name, job.data);
    return inSpan(`job ${name}`, {
      kind: SpanKind.CONSUMER,
      parent,
      links,
      attributes: { 'msp.job.name': name, 'msp.job.id': job.id, 'msp.job.attempt': job.attempt, 'msp.job.scheduled': job.scheduled },
    }, () => handler({ ...job, data: data as JobPayloads[N] }));
  };
}

/** The queue, with every job added carrying its trace and every handler run in its job's span. */
export class TracedJobQueue implements JobQueue {
  constructor(private readonly inner: JobQueue) {}

  get driver() { return this.inner.driver; }

  register<N extends JobName, R>(name: N, handler: JobHandler<JobPayloads[N], R>, opts?: { concurrency?: number }): void {
    this.inner.register(name, tracedHandler(name, handler), opts);
  }

  add<N extends JobName>(name: N, data: JobPayloads[N], opts?: AddJobOptions): Promise<{ id: string }> {
    const carried = jobTraceOf(context.active());
    return this.inner.add(name, carried ? { ...data, trace: carried } : data, opts);
  }

  start() { return this.inner.start(); }
  waitFor<R = unknown>(jobId: string, timeoutMs?: number) { return this.inner.waitFor<R>(jobId, timeoutMs); }
  upsertScheduler<N extends JobName>(schedulerId: string, everyMs: number, name: N, data: JobPayloads[N]) { return this.inner.upsertScheduler(schedulerId, everyMs, name, data); }
  removeScheduler(schedulerId: string) { return this.inner.removeScheduler(schedulerId); }
  schedulerIds() { return this.inner.schedulerIds(); }
  ping() { return this.inner.ping(); }
  counts() { return this.inner.counts(); }
  lastWorkerBeat() { return this.inner.lastWorkerBeat(); }
  close() { return this.inner.close(); }
}
