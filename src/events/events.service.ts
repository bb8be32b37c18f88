import type { DataSource } from 'typeorm';
import type { JobQueue } from '../../jobs/queue/types';

/** Change events: written by sync (change detection), read by the events feed. */
export class EventsService {
  constructor(readonly ds: DataSource, readonly queue: JobQueue) {}
}
