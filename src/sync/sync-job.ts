/** The `sync.connection` job's payload: one sync of one connection (jobs/processors/sync-connection.processor.ts runs it). */
import type { JobPayload } from '../../jobs/queue/job';
import type { SyncResource } from '../connectors/types';

export interface SyncConnectionJob extends JobPayload {
  tenantId: string;
  connectionId: string;
  full?: boolean;
  resources?: SyncResource[];
}

declare module '../../jobs/queue/types' {
  interface JobPayloads {
    'sync.connection': SyncConnectionJob;
  }
}
