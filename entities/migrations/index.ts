import { InitialSchema1763780000000 } from './1763780000000-initial-schema';
import { SyncQuarantine1763790000000 } from './1763790000000-sync-quarantine';

/** Every migration, in order. Run at start (never `synchronize`). */
export const MIGRATIONS = [InitialSchema1763780000000, SyncQuarantine1763790000000];
