/** The service graph: one instance of each domain service, built once at start. */
import type { Logger } from 'pino';
import type { DataSource } from 'typeorm';
import type { JobQueue } from '../jobs/queue/types';
import type { AppConfig } from './config/config';
import type { Database } from './db/database';
import { AuditService } from './audit/audit.service';
import { RecordsService } from './records/records.service';
import type { SandboxSimulators } from './simulators';
import { SandboxService } from './sandbox/sandbox.service';
import { SecretBox } from './security/secret-box';
import { SyncJobs } from './sync/sync-jobs';
import { SyncService } from './sync/sync.service';
import { AccessService } from './access/access.service';
import { AdminService } from './tenants/admin.service';
import { VendorHttpClient } from './connectors/vendor-http';
import { EventsService } from './events/events.service';
import { WebhooksService } from './webhooks/webhooks.service';
import { IdempotencyService } from './writes/idempotency.service';
import { WritePipeline } from './writes/write-pipeline';
import { TicketsService } from './tickets/tickets.service';
import { FindingsService } from './tickets/findings.service';
import { DeployService } from './devices/deploy.service';

export interface Services {
  config: AppConfig;
  db: Database;
  ds: DataSource;
  box: SecretBox;
  queue: JobQueue;
  logger: Logger;
  access: AccessService;
  records: RecordsService;
  audit: AuditService;
  admin: AdminService;
  sync: SyncService;
  syncJobs: SyncJobs;
  simulators: SandboxSimulators | null;
  sandbox: SandboxService | null;
  events: EventsService;
  tickets: TicketsService;
  findings: FindingsService;
  deploy: DeployService;
  webhooks: WebhooksService;
  /** The vendor HTTP client every connector uses (tests pass one with short backoff). */
  http: VendorHttpClient;
}

export function createServices(
  config: AppConfig, db: Database, queue: JobQueue, logger: Logger, simulators: SandboxSimulators | null,
  http: VendorHttpClient = new VendorHttpClient(),
): Services {
  const ds = db.dataSource;
  const box = new SecretBox(config.encryptionKey);
  const access = new AccessService(ds);
  const records = new RecordsService(ds);
  const audit = new AuditService(ds);
  const sync = new SyncService(ds, box, audit, logger, http);
  sync.onSynced = () => records.invalidateSyncedAt();
  const syncJobs = new SyncJobs(ds, queue, config.syncIntervalMs);
  const events = new EventsService(ds);
  const sandbox = simulators ? new SandboxService(ds, box, access, simulators, syncJobs, () => config.publicUrl, events) : null;
  const pipeline = new WritePipeline(queue, audit, new IdempotencyService(ds), () => config.publicUrl);
  const tickets = new TicketsService(ds, access, pipeline, syncJobs, sync);
  const findings = new FindingsService(ds, access, pipeline, tickets, events);
  return {
    config, db, ds, box, queue, logger, access, records, audit, tickets, findings, deploy: new DeployService(ds, access, pipeline),
    admin: new AdminService(ds, box, access), sync, syncJobs, simulators, sandbox,
    events,
    webhooks: new WebhooksService(ds, box, queue, config),
    http,
  };
}
