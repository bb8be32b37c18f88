/** Picks the job-queue driver: BullMQ when a Redis URL is configured, the in-process runner otherwise. */
import { BullMqJobQueue } from './bullmq';
import { InProcessJobQueue } from './in-process';
import { QueueLogger } from './logger';
import { JobQueue } from './types';

export interface CreateJobQueueOptions {
  redisUrl?: string;
  prefix?: string;
  logger?: QueueLogger;
  /** BullMQ only: lock duration and stalled-job check interval (a killed worker's job is re-run after them). */
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  /** How often a started queue (a worker) beats (JobQueue.lastWorkerBeat). */
  heartbeatMs?: number;
}

export function createJobQueue(opts: CreateJobQueueOptions = {}): JobQueue {
  if (opts.redisUrl) {
    return new BullMqJobQueue({
      redisUrl: opts.redisUrl, prefix: opts.prefix, logger: opts.logger,
      lockDurationMs: opts.lockDurationMs, stalledIntervalMs: opts.stalledIntervalMs, heartbeatMs: opts.heartbeatMs,
    });
  }
  return new InProcessJobQueue({ logger: opts.logger, heartbeatMs: opts.heartbeatMs });
}

export * from './types';
export { BullMqJobQueue } from './bullmq';
export { InProcessJobQueue } from './in-process';
export type { QueueLogger } from './logger';
export { computeBackoffDelay } from './retry-policy';
