/**
 * The `sync.connection` job: one sync of one connection. Failures are thrown so the queue retries. A scheduled
 * run whose connection is already being synced (its previous run outlasted the interval) ends at once rather
 * than take a second worker slot for the same connection (src/sync/sync-leases.ts).
 */
import { EntityNotFoundError } from 'typeorm';
import type { JobContext } from '../queue/types';
import type { SyncReport, SyncService } from '../../src/sync/sync.service';
import type { SyncConnectionJob } from '../../src/sync/sync-job';
import type { SyncLeases } from '../../src/sync/sync-leases';

export function syncConnectionProcessor(sync: SyncService, leases: SyncLeases) {
  return async (job: JobContext<SyncConnectionJob>): Promise<SyncReport> => {
    const lease = await leases.take(job.data.connectionId);
    // Nothing read, nothing failed: the sync under way answers for this run.
    if (!lease && job.scheduled) return { connectionId: job.data.connectionId, tenantId: job.data.tenantId, connector: '', ok: true, resources: [] };
    try {
      return await sync.syncConnection(job.data.connectionId, { full: job.data.full === true, resources: job.data.resources });
    } catch (err) {
      // The connection was removed after the job was queued: nothing to sync, nothing to retry.
      if (err instanceof EntityNotFoundError) {
        return { connectionId: job.data.connectionId, tenantId: job.data.tenantId, connector: '', ok: false, error: 'connection removed', resources: [] };
      }
      throw err;
    } finally {
      await lease?.release();
    }
  };
}
