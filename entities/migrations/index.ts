import { InitialSchema1763780000000 } from './1763780000000-initial-schema';
import { SyncQuarantine1763790000000 } from './1763790000000-sync-quarantine';
import { ProductsAndSubscriptions1763795000000 } from './1763795000000-products-and-subscriptions';
import { MspKeys1763900000000 } from './1763900000000-msp-keys';
import { Identity1763910000000 } from './1763910000000-identity';
import { Packages1764000000000 } from './1764000000000-packages';
import { Billing1764200000000 } from './1764200000000-billing';
import { WriteFence1764300000000 } from './1764300000000-write-fence';
import { CostResolutions1764400000000 } from './1764400000000-cost-resolutions';
import { CompanyNameIndex1764500000000 } from './1764500000000-company-name-index';
import { WriteLandBy1764600000000 } from './1764600000000-write-land-by';
import { WebhookLanes1764700000000 } from './1764700000000-webhook-lanes';
import { ConnectSessions1764800000000 } from './1764800000000-connect-sessions';
import { Console1764900000000 } from './1764900000000-console';
import { Freshness1765000000000 } from './1765000000000-freshness';
import { WebhookDeliveryPosition1765050000000 } from './1765050000000-webhook-delivery-position';
import { SyncDueIndex1765100000000 } from './1765100000000-sync-due-index';
import { QuietListing1765200000000 } from './1765200000000-quiet-listing';
import { RecordFillFactor1765300000000 } from './1765300000000-record-fill-factor';
import { People1765400000000 } from './1765400000000-people';
import { Sso1765405000000 } from './1765405000000-sso';
import { RepairSessions1765430000000 } from './1765430000000-repair-sessions';
import { RequestLog1765540000000 } from './1765540000000-request-log';
import { IsvKeys1765510000000 } from './1765510000000-isv-keys';
import { ConnectionEvents1765520000000 } from './1765520000000-connection-events';
import { WebhookEndpoints1765530000000 } from './1765530000000-webhook-endpoints';
import { SandboxSnapshots1765600000000 } from './1765600000000-sandbox-snapshots';

/** Every migration, in order. Run at start (never `synchronize`). */
export const MIGRATIONS = [
  InitialSchema1763780000000, SyncQuarantine1763790000000, ProductsAndSubscriptions1763795000000, MspKeys1763900000000, Identity1763910000000,
  Packages1764000000000, Billing1764200000000, WriteFence1764300000000, CostResolutions1764400000000, CompanyNameIndex1764500000000, WriteLandBy1764600000000,
  WebhookLanes1764700000000, ConnectSessions1764800000000, Console1764900000000, Freshness1765000000000,
  WebhookDeliveryPosition1765050000000, SyncDueIndex1765100000000, QuietListing1765200000000,
  RecordFillFactor1765300000000, People1765400000000, Sso1765405000000, RepairSessions1765430000000,
  IsvKeys1765510000000, ConnectionEvents1765520000000, WebhookEndpoints1765530000000,
  RequestLog1765540000000, SandboxSnapshots1765600000000,
];
