import { InitialSchema1763780000000 } from './1763780000000-initial-schema';
import { ProductsAndSubscriptions1763790000000 } from './1763790000000-products-and-subscriptions';

/** Every migration, in order. Run at start (never `synchronize`). */
export const MIGRATIONS = [InitialSchema1763780000000, ProductsAndSubscriptions1763790000000];
