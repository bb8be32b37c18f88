import { InitialSchema1763780000000 } from './1763780000000-initial-schema';

/** Every migration, in order. Run at start (never `synchronize`). */
export const MIGRATIONS = [InitialSchema1763780000000];
