/** Picks the job-queue driver: BullMQ when a Redis URL is configured, the in-process runner otherwise. */
import { BullMqJobQueue } from './bullmq';
import { InProcessJobQueue } from './in-process';
import { QueueLogger } from './logger';
import { JobQueue } from './types';

export interface CreateJobQueueOptions {
  redisUrl?: string;
  prefix?: string;
  logger?: QueueLogger;
}

export function createJobQueue(opts: CreateJobQueueOptions = {}): JobQueue {
  if (opts.redisUrl) return new BullMqJobQueue({ redisUrl: opts.redisUrl, prefix: opts.prefix, logger: opts.logger });
  return new InProcessJobQueue({ logger: opts.logger });
}

export * from './types';
export { BullMqJobQueue } from './bullmq';
export { InProcessJobQueue } from './in-process';
export type { QueueLogger } from './logger';
export { computeBackoffDelay } from './retry-policy';
