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
import { IdentityService } from './identity/identity.service';
import { ProjectsService } from './projects/projects.service';
import { DeployService } from './devices/deploy.service';
import { AgreementLinesService } from './agreements/agreement-lines.service';
import { ConnectionBudgets } from './budget/connection-budgets';
import { RateLimits } from './access/rate-limit';

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
  agreementLines: AgreementLinesService;
  syncJobs: SyncJobs;
  simulators: SandboxSimulators | null;
  sandbox: SandboxService | null;
  events: EventsService;
  tickets: TicketsService;
  /** The one write skeleton every write runs through. */
  pipeline: WritePipeline;
  findings: FindingsService;
  projects: ProjectsService;
  deploy: DeployService;
  webhooks: WebhooksService;
  identity: IdentityService;
  /** The vendor HTTP client every connector uses (tests pass one with short backoff). */
  http: VendorHttpClient;
  /** One API budget per connection (design.md section 11). */
  budgets: ConnectionBudgets;
  /** Our own per-key limit and the per-address limit on failed authentications. */
  rateLimits: RateLimits;
}

export function createServices(
  config: AppConfig, db: Database, queue: JobQueue, logger: Logger, simulators: SandboxSimulators | null,
  http: VendorHttpClient = new VendorHttpClient(),
): Services {
  const ds = db.dataSource;
  const box = new SecretBox(config.encryptionKey);
  const access = new AccessService(ds);
  if (config.redisUrl) access.shareChanges(config.redisUrl, config.queuePrefix);
  const records = new RecordsService(ds);
  const audit = new AuditService(ds);
  const budgets = ConnectionBudgets.fromConfig(config);
  const sync = new SyncService(ds, box, audit, logger, http, budgets);
  sync.onSynced = () => records.invalidateSyncedAt();
  const syncJobs = new SyncJobs(ds, queue, (c) => config.syncIntervalMs ?? budgets.syncIntervalMs(c));
  const events = new EventsService(ds);
  const sandbox = simulators ? new SandboxService(ds, box, access, simulators, syncJobs, () => config.publicUrl, events) : null;
  const pipeline = new WritePipeline(queue, audit, new IdempotencyService(ds), () => config.publicUrl);
  const identity = new IdentityService(ds);
  const tickets = new TicketsService(ds, access, pipeline, syncJobs, sync, identity);
  const projects = new ProjectsService(ds, access, pipeline, tickets);
  const findings = new FindingsService(ds, access, pipeline, tickets, events, projects);
  return {
    config, db, ds, box, queue, logger, access, records, audit, tickets, findings, projects, deploy: new DeployService(ds, access, pipeline),
    admin: new AdminService(ds, box, access), sync, syncJobs, simulators, sandbox,
    events, identity, pipeline,
    webhooks: new WebhooksService(ds, box, queue, config),
    http, budgets,
    rateLimits: RateLimits.create({ redisUrl: config.redisUrl, prefix: config.queuePrefix, perKeyPerMinute: config.rateLimitPerMinute, authFailuresPerMinute: config.authFailuresPerMinute }),
    agreementLines: new AgreementLinesService(ds, access, pipeline, sync),
  };
}
