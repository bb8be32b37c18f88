/** Job ids, checked the same way in both drivers. */
import { randomUUID } from 'node:crypto';

/**
 * Ids for jobs added without one. Not BullMQ's per-queue counter: the BullMQ driver keeps one queue
 * per job name, and counters would repeat across queues while waitFor(jobId) looks ids up across all.
 */
export function newJobId(): string {
  return randomUUID();
}

/** BullMQ rejects integer-looking custom ids and ids containing ':' (its key separator). */
export function assertValidJobId(id: string): void {
  if (id.length === 0) throw new Error('Job id must not be empty');
  if (`${parseInt(id, 10)}` === id) throw new Error(`Job id "${id}" must not be an integer`);
  if (id.includes(':')) throw new Error(`Job id "${id}" must not contain ":"`);
}
