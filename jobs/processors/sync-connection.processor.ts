/** The `sync.connection` job: one sync of one connection. Failures are thrown so the queue retries. */
import { EntityNotFoundError } from 'typeorm';
import type { JobContext } from '../queue/types';
import type { SyncReport, SyncService } from '../../src/sync/sync.service';
import type { SyncConnectionJob } from '../../src/sync/sync-job';

export function syncConnectionProcessor(sync: SyncService) {
  return async (job: JobContext<SyncConnectionJob>): Promise<SyncReport> => {
    try {
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
