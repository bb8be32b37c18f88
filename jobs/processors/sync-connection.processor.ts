/**
 * The `sync.connection` job: one sync of one connection. Failures are thrown so the queue retries. A run from
 * the connection's scheduler checks only what is due (src/sync/freshness.ts): resources another run has
 * claimed are left to it, so a connection whose sync outlasts its interval keeps one worker slot, not one
 * more each tick.
 */
import { EntityNotFoundError } from 'typeorm';
import type { JobContext } from '../queue/types';
import type { SyncReport, SyncService } from '../../src/sync/sync.service';
import type { SyncConnectionJob } from '../../src/sync/sync-job';
import type { SyncJobs } from '../../src/sync/sync-jobs';

export function syncConnectionProcessor(sync: SyncService, syncJobs: SyncJobs) {
  return async (job: JobContext<SyncConnectionJob>): Promise<SyncReport> => {
    try {
      const report = await sync.syncConnection(job.data.connectionId, { full: job.data.full === true, resources: job.data.resources, scheduled: job.scheduled === true });
      // The plan moved (a resource went quiet or busy, or its cost changed): the scheduler ticks at the new pace.
      if (report.tickChanged) await syncJobs.reschedule(report.connectionId);
      return report;
    } catch (err) {
      // The connection was removed after the job was queued: nothing to sync, nothing to retry.
      if (err instanceof EntityNotFoundError) {
        return { connectionId: job.data.connectionId, tenantId: job.data.tenantId, connector: '', ok: false, error: 'connection removed', resources: [] };
      }
      throw err;
    }
  };
}
