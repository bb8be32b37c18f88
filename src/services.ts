/** The service graph: one instance of each domain service, built once at start. */
import { RequestAuthenticator } from './access/authenticator';
import type { Logger } from 'pino';
import type { DataSource } from 'typeorm';
import { CommittedChanges } from './shared/committed-changes';
import type { JobQueue } from '../jobs/queue/types';
import { sandboxVendorOrigin, type AppConfig } from './config/config';
import type { Database } from './db/database';
import { AuditService } from './audit/audit.service';
import { RecordsService } from './records/records.service';
import type { SandboxSimulators } from './simulators';
import { SandboxService } from './sandbox/sandbox.service';
import { SecretBox } from './security/secret-box';
import { SyncJobs } from './sync/sync-jobs';
import { FreshnessSweeper } from './sync/sweeper';
import { StoreUpkeep } from './db/upkeep.store';
import { SyncStatesStore } from './sync/sync-states.store';
import { SyncService } from './sync/sync.service';
import { AccessService } from './access/access.service';
import { AdminService } from './tenants/admin.service';
import { VendorHttpClient } from './connectors/vendor-http';
import { capabilitiesOf } from './connectors/registry';
import { EventsService } from './events/events.service';
import { ConnectionStates } from './events/connection-states.store';
import { WebhooksService } from './webhooks/webhooks.service';
import { IdempotencyService } from './writes/idempotency.service';
import { WritePipeline } from './writes/write-pipeline';
import { TicketsService } from './tickets/tickets.service';
import { FindingsService } from './tickets/findings.service';
import { IdentityService } from './identity/identity.service';
import { ProjectsService } from './projects/projects.service';
import { DeployService } from './devices/deploy.service';
import { WriteFence } from './writes/write-fence';
import { ChargesService } from './billing/charges.service';
import { CostRowsService } from './billing/cost-rows.service';
import { LineMappingsService } from './billing/line-mappings.service';
import { ReconciliationService } from './billing/reconciliation.service';
import { AgreementLinesService } from './agreements/agreement-lines.service';
import { ConnectionBudgets } from './budget/connection-budgets';
import { RateLimits } from './access/rate-limit';
import { AskService } from './ask/ask.service';
import { ConnectSessions } from './connect/connect-sessions.service';
import { ConsoleAuth } from './console/console-auth';
import { SsoSettings } from './people/sso/sso-settings';
import { PeopleStore } from './people/people.store';
import { SessionsStore } from './people/sessions.store';
import { PeopleSessions } from './people/sessions';
import { PeopleService } from './people/people.service';
import { Mailer } from './people/mailer';
import { OutboxStore } from './people/outbox.store';
import { CompaniesStore } from './companies/companies.store';
import { TenantsStore } from './tenants/tenants.store';
import { IsvKeys } from './tenants/isv-keys.service';
import { IsvKeysStore } from './tenants/isv-keys.store';
import { RequestLogStore } from './requests/requests.store';
import { RequestLogService } from './requests/requests.service';
import { RequestRecorder } from './requests/recorder';

export interface Services {
  config: AppConfig;
  db: Database;
  ds: DataSource;
  box: SecretBox;
  queue: JobQueue;
  logger: Logger;
  /** Committed changes and who reacts to them (src/shared/committed-changes.ts; each feature's `reactions`). */
  changes: CommittedChanges;
  access: AccessService;
  records: RecordsService;
  audit: AuditService;
  admin: AdminService;
  sync: SyncService;
  agreementLines: AgreementLinesService;
  costRows: CostRowsService;
  lineMappings: LineMappingsService;
  charges: ChargesService;
  reconciliation: ReconciliationService;
  syncJobs: SyncJobs;
  /** The scheduled checks, run where jobs run (src/sync/sweeper.ts); null: no schedule (SYNC_INTERVAL_SECONDS=0). */
  sweeper: FreshnessSweeper | null;
  simulators: SandboxSimulators | null;
  sandbox: SandboxService | null;
  events: EventsService;
  /** Each connection's health state and the connection events that tell its changes (src/events/connection-state.ts). */
  connectionStates: ConnectionStates;
  tickets: TicketsService;
  /** The one write skeleton every write runs through. */
  pipeline: WritePipeline;
  /** This process's heartbeat and the lease around every vendor call (exactly once across processes). */
  writeFence: WriteFence;
  /** Vacuum and statistics where the database keeps none itself, run where jobs run (src/db/upkeep.store.ts). */
  upkeep: StoreUpkeep;
  findings: FindingsService;
  projects: ProjectsService;
  deploy: DeployService;
  webhooks: WebhooksService;
  identity: IdentityService;
  /** Ask: it holds a short name cache and, when configured, the model engine. */
  ask: AskService;
  /** Connect sessions and the connect page's steps (src/connect). */
  connectSessions: ConnectSessions;
  /** Console sign-in links and sessions (src/console). */
  consoleAuth: ConsoleAuth;
  /** People, memberships, invitations and magic links (src/people). */
  people: PeopleService;
  peopleStore: PeopleStore;
  /** The one session layer of both consoles, and what single sign-on calls to sign a person in (src/people/sessions.ts). */
  peopleSessions: PeopleSessions;
  /** Single sign-on settings per organisation, and whether a domain requires it (src/people/sso). */
  sso: SsoSettings;
  /** Mail through SMTP_URL, or into the local outbox. */
  mailer: Mailer;
  outbox: OutboxStore;
  /** The companies feature's statements (company create's match, contact match). */
  companiesStore: CompaniesStore;
  /** The tenants feature's reads (ISVs, sync states, record counts) and removals. */
  tenantsStore: TenantsStore;
  /** The vendor HTTP client every connector uses (tests pass one with short backoff). */
  http: VendorHttpClient;
  /** The vendors' day (ms since the epoch) the connectors' date rules read: the wall clock, or a test's fixed one. */
  vendorNow: () => number;
  /** One API budget per connection (docs/architecture.md, Vendor API budget). */
  budgets: ConnectionBudgets;
  /** Our own per-key limit and the per-address limit on failed authentications. */
  rateLimits: RateLimits;
  /** The one request authenticator every surface uses (key lookup and both limits). */
  authenticator: RequestAuthenticator;
  /** An ISV's keys as its people manage them on the console's keys page (src/tenants/isv-keys.service.ts). */
  isvKeys: IsvKeys;
  /** The ISV's request log: its reads and prune (src/requests), and the recorder every keyed request passes (src/app.ts). */
  requestLog: RequestLogService;
  requestRecorder: RequestRecorder;
}

export function createServices(
  config: AppConfig, db: Database, queue: JobQueue, logger: Logger, simulators: SandboxSimulators | null,
  http: VendorHttpClient = new VendorHttpClient({ timeoutMs: config.vendorTimeoutMs }),
  vendorNow: () => number = Date.now,
  now: () => number = Date.now,
): Services {
  const ds = db.dataSource;
  const box = new SecretBox(config.encryptionKey);
  const changes = new CommittedChanges();
  changes.useLogger(logger);
  const access = new AccessService(ds, now, changes);
  if (config.redisUrl) access.shareChanges(config.redisUrl, config.queuePrefix);
  const records = new RecordsService(ds);
  const audit = new AuditService(ds);
  const budgets = ConnectionBudgets.fromConfig(config, (connector) => capabilitiesOf(connector).budget);
  const sync = new SyncService(ds, box, audit, logger, changes, http, budgets, vendorNow);
  // Each resource is checked at its freshness plan's interval; SYNC_INTERVAL_SECONDS fixes every resource's interval (0: no schedule).
  sync.fixedIntervalMs = config.syncIntervalMs || null;
  const syncJobs = new SyncJobs(ds, queue, config.syncIntervalMs === 0 ? null : (c) => sync.currentTick(c));
  const events = new EventsService(ds, changes);
  const connectionStates = new ConnectionStates(ds, events);
  const sandbox = simulators ? new SandboxService(ds, box, access, simulators, syncJobs, () => sandboxVendorOrigin(config), events) : null;
  // The embedded default is one process per database: any other instance there is gone.
  // A vendor request may land until its timeout plus the vendor's margin after it was sent: a take-over waits for that.
  const writeFence = new WriteFence(ds, {
    role: config.role, heartbeatMs: config.instanceHeartbeatMs, exclusive: !config.databaseUrl,
    landingMs: http.opts.timeoutMs + config.vendorLandingMarginMs,
  });
  const pipeline = new WritePipeline(queue, audit, new IdempotencyService(ds, writeFence), () => sandboxVendorOrigin(config), config.writeWaitMs);
  const identity = new IdentityService(ds, changes);
  const tickets = new TicketsService(ds, access, pipeline, syncJobs, sync, identity);
  const projects = new ProjectsService(ds, access, pipeline, tickets);
  const findings = new FindingsService(ds, access, pipeline, tickets, events);
  const admin = new AdminService(ds, box, access, changes);
  const webhooks = new WebhooksService(ds, box, queue, config, access);
  const consoleAuth = new ConsoleAuth(ds);
  const peopleStore = new PeopleStore(ds);
  const sessionsStore = new SessionsStore(ds);
  const outbox = new OutboxStore(ds);
  const mailer = new Mailer({ smtpUrl: config.smtpUrl, from: config.mailFrom, development: config.development }, outbox, logger);
  const rateLimits = RateLimits.create({ redisUrl: config.redisUrl, prefix: config.queuePrefix, perKeyPerMinute: config.rateLimitPerMinute, authFailuresPerMinute: config.authFailuresPerMinute });
  const people = new PeopleService(peopleStore, sessionsStore, mailer, rateLimits, config);
  return {
    config, db, ds, box, queue, logger, changes, access, records, audit, tickets, findings, projects, deploy: new DeployService(ds, access, pipeline),
    admin, sync, syncJobs, simulators, sandbox,
    sweeper: config.syncIntervalMs === 0 ? null : new FreshnessSweeper(sync, new SyncStatesStore(ds), logger, config.syncConcurrency),
    events, connectionStates, identity, pipeline, writeFence,
    upkeep: new StoreUpkeep(ds, !config.databaseUrl, logger),
    webhooks,
    http, vendorNow, budgets,
    rateLimits,
    authenticator: new RequestAuthenticator(access, rateLimits, config.adminToken),
    isvKeys: new IsvKeys(new IsvKeysStore(ds), admin, access, audit, now),
    ...requestLogOf(ds, config, logger),
    agreementLines: new AgreementLinesService(ds, access, pipeline, sync, vendorNow),
    costRows: new CostRowsService(ds, changes),
    lineMappings: new LineMappingsService(ds, vendorNow, changes),
    charges: new ChargesService(ds, pipeline, sync, vendorNow),
    reconciliation: new ReconciliationService(ds),
    ask: new AskService(ds, config),
    companiesStore: new CompaniesStore(ds),
    tenantsStore: new TenantsStore(ds),
    consoleAuth,
    peopleStore, outbox, mailer,
    sso: new SsoSettings(ds, box, config),
    people,
    // Sign-ins and sign-outs of a tenant's console land in its audit log; an ISV's have no log yet.
    peopleSessions: new PeopleSessions(sessionsStore, peopleStore, config, async (org, action, detail) => {
      if (org.kind === 'tenant') await audit.write({ tenantId: org.id, action, outcome: 'ok', detail });
    }),
    connectSessions: new ConnectSessions({ ds, box, config, http, logger, access, admin, audit, queue, syncJobs, webhooks, simulators, rateLimits, consoleAuth, people, peopleStore, connectionStates }),
  };
}

/** The request log's reads and its recorder, over one store. */
function requestLogOf(ds: DataSource, config: AppConfig, logger: Logger): Pick<Services, 'requestLog' | 'requestRecorder'> {
  const store = new RequestLogStore(ds);
  return {
    requestLog: new RequestLogService(store, config.requestLog, logger),
    requestRecorder: new RequestRecorder(store, logger, { enabled: config.requestLog.enabled }),
  };
}
