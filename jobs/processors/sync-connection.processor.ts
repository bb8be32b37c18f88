/**
 * The `sync.connection` job: one sync of one connection, asked for (an on-demand sync, the refresh after our
 * own write). Failures are thrown so the queue retries. Scheduled checks are not jobs: src/sync/sweeper.ts.
 */
import { EntityNotFoundError } from 'typeorm';
import type { JobContext } from '../queue/types';
import type { SyncReport, SyncService } from '../../src/sync/sync.service';
import type { SyncConnectionJob } from '../../src/sync/sync-job';

export function syncConnectionProcessor(sync: SyncService) {
  return async (job: JobContext<SyncConnectionJob>): Promise<SyncReport> => {
    try {
      // A run of a per-connection job scheduler an earlier version placed (the worker removes them as it starts,
      // and one may still fire meanwhile): the sweeper does that work now (src/sync/sweeper.ts).
      if (job.scheduled) return { connectionId: job.data.connectionId, tenantId: job.data.tenantId, connector: '', ok: true, resources: [] };
      return await sync.syncConnection(job.data.connectionId, { full: job.data.full === true, resources: job.data.resources });
    } catch (err) {
      // The connection was removed after the job was queued: nothing to sync, nothing to retry.
      if (err instanceof EntityNotFoundError) {
        return { connectionId: job.data.connectionId, tenantId: job.data.tenantId, connector: '', ok: false, error: 'connection removed', resources: [] };
      }
      throw err;
    }
  };
}
