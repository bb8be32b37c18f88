import { InitialSchema1763780000000 } from './1763780000000-initial-schema';
import { MspKeys1763900000000 } from './1763900000000-msp-keys';
import { Packages1764000000000 } from './1764000000000-packages';

/** Every migration, in order. Run at start (never `synchronize`). */
export const MIGRATIONS = [InitialSchema1763780000000, MspKeys1763900000000, Packages1764000000000];
