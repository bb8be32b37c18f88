/** The `sync.connection` job: one sync of one connection. Failures are thrown so the queue retries. */
import type { JobContext, JobPayload } from '../queue/types';
import type { SyncReport, SyncService } from '../../src/sync/sync.service';
import type { SyncResource } from '../../src/connectors/types';

export interface SyncConnectionJob extends JobPayload {
  tenantId: string;
  connectionId: string;
  full?: boolean;
  resources?: SyncResource[];
}

export function syncConnectionProcessor(sync: SyncService) {
  return async (job: JobContext<SyncConnectionJob>): Promise<SyncReport> =>
    sync.syncConnection(job.data.connectionId, { full: job.data.full === true, resources: job.data.resources });
}
