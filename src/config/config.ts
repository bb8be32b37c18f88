/** Typed configuration, validated once at start (docs/architecture.md, Running it). */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { KeyStoreError, loadOrCreateEncryptionKey } from './key-store';

/** SYNC_CONCURRENCY unset (docs/architecture.md, Running it). */
/**
 * 192: the fleet bench's thousand tenants (3,000 connections, vendors answering in 100 ms) need about that
 * many checks in flight to check every hot resource within its interval; 64 kept 12 % of connections
 * within it (docs/architecture.md, Freshness).
 */
export const DEFAULT_SYNC_CONCURRENCY = 192;

const envSchema = z.object({
  DATABASE_URL: z.string().url().optional(),
  REDIS_URL: z.string().url().optional(),
  SERVICE_ROLE: z.enum(['api', 'worker', 'all']).default('all'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('127.0.0.1'),
  PUBLIC_URL: z.string().url().optional(),
  DATA_DIR: z.string().default('.data'),
  SANDBOX_API_KEY: z.string().min(20).optional(),
  ADMIN_TOKEN: z.string().min(16).optional(),
  ENCRYPTION_KEY: z.string().optional(),
  /** Unset: derived per connection from its API budget (60 s at least, 60 s on the sandbox); 0 turns the scheduler off. */
  SYNC_INTERVAL_SECONDS: z.coerce.number().int().min(0).optional(),
  /**
   * Operator's API budgets (docs/architecture.md, Vendor API budget), JSON keyed by connector name or "*":
   * {"*": {"requests_per_hour": 2000, "concurrent": 2}}. A connection's settings.budget wins over it.
   */
  VENDOR_BUDGET: z.string().optional(),
  SANDBOX: z.enum(['true', 'false']).default('true'),
  /**
   * Where every process reaches the sandbox's simulators (they live on the api): `http://api:3000` in
   * docker-compose.yml, where PUBLIC_URL is the callers' address and not one the worker's container can reach.
   */
  SANDBOX_VENDOR_BASE_URL: z.string().url().refine((u) => /^https?:$/.test(new URL(u).protocol) && ['', '/'].includes(new URL(u).pathname) && !new URL(u).search, 'must be an http(s) origin without a path').optional(),
  QUEUE_PREFIX: z.string().default('msp'),
  /** Run inside this PostgreSQL schema (isolated test databases; a worker process joins the API's). */
  DATABASE_SCHEMA: z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/).optional(),
  /**
   * Syncs one worker process runs at once: sync jobs, and as many scheduled checks. A sync mostly waits on its vendor (each answer takes tens to
   * hundreds of milliseconds), so one process keeps many in flight; each connection's own calls stay inside
   * its API budget whatever this is. Each sync in flight holds at most two pages of records (the one written
   * and the one fetched meanwhile): fleets of very large tenants want a lower value or a larger heap.
   */
  SYNC_CONCURRENCY: z.coerce.number().int().min(1).max(1024).default(DEFAULT_SYNC_CONCURRENCY),
  /** PostgreSQL connections per process. Unset: enough for SYNC_CONCURRENCY syncs and the other jobs (databasePoolSize). */
  DATABASE_POOL_SIZE: z.coerce.number().int().min(2).max(200).optional(),
  QUEUE_LOCK_MS: z.coerce.number().int().min(1000).optional(),
  QUEUE_STALLED_MS: z.coerce.number().int().min(500).optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  WEBHOOK_ALLOW_LOOPBACK: z.enum(['true', 'false']).default('false'),
  /** Stack traces in GraphQL error answers: only with NODE_ENV=development as well. */
  GRAPHQL_STACKTRACES: z.enum(['true', 'false']).default('false'),
  /** Multiplies the webhook retry schedule (tests shrink it); 1 in production. */
  WEBHOOK_RETRY_SCALE: z.coerce.number().positive().default(1),
  /** Our own limit per API key, requests a minute (0: off). Unset: 1200, or 6000 with the sandbox on. */
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).optional(),
  /** Failed authentications a minute from one client address before it gets 429 without a lookup. */
  AUTH_FAILURES_PER_MINUTE: z.coerce.number().int().min(1).default(60),
  /** How long a sync call (sync now, sandbox reset and simulate) waits before answering 202 with the sync to poll. */
  SYNC_WAIT_MS: z.coerce.number().int().min(1000).max(600_000).default(60_000),
  /** How long a committing request waits for its vendor write (tests shorten it); the job sends nothing after. */
  WRITE_WAIT_MS: z.coerce.number().int().min(2000).max(600_000).default(120_000),
  /** How often a process says it is alive; one silent for three beats is gone, and its commits are released. */
  INSTANCE_HEARTBEAT_MS: z.coerce.number().int().min(200).max(60_000).default(5_000),
  /** How often a worker beats, and how old the newest beat may be before an api's /readyz says no worker runs. */
  WORKER_HEARTBEAT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  WORKER_HEARTBEAT_STALE_SECONDS: z.coerce.number().int().min(1).max(86_400).default(60),
  /** Slow clients (src/http/connection-limits.ts): request and headers time limits, keep-alive, per-socket and per-address caps (0: none). */
  HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(500).max(600_000).default(30_000),
  HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(500).max(600_000).default(20_000),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(1000).max(600_000).default(65_000),
  HTTP_MAX_REQUESTS_PER_SOCKET: z.coerce.number().int().min(0).max(1_000_000).default(1000),
  MAX_CONNECTIONS_PER_ADDRESS: z.coerce.number().int().min(0).max(1_000_000).default(256),
  /** Per-request timeout of every vendor call. */
  VENDOR_TIMEOUT_MS: z.coerce.number().int().min(500).max(300_000).default(30_000),
  /**
   * How long after our timeout a vendor may still carry out a request it received (its processing margin):
   * a write whose outcome is unknown is looked up by marker until then, and a take-over waits for it.
   */
  VENDOR_LANDING_MARGIN_MS: z.coerce.number().int().min(0).max(600_000).default(30_000),
  /** Largest single MCP answer in bytes; a tool answer over it becomes a tool error asking for a lower `limit`. */
  MCP_MAX_ANSWER_BYTES: z.coerce.number().int().min(1024).default(4 * 1024 * 1024),
  /**
   * The budget of one MCP list answer in tokens, estimated from characters (src/mcp/answer-budget.ts): a
   * page over it is cut to the whole records that fit, with its next_cursor. 25,000 is Claude Code's default cap.
   */
  MCP_ANSWER_BUDGET_TOKENS: z.coerce.number().int().min(1_000).max(10_000_000).default(25_000),
  /** Optional ask engine (docs/architecture.md, Device write and ask): an OpenAI-compatible chat model; off unless the base URL is set. */
  ASK_MODEL_BASE_URL: z.string().url().refine((u) => /^https?:$/.test(new URL(u).protocol), 'must be http(s)').optional(),
  ASK_MODEL_API_KEY: z.string().min(1).optional(),
  ASK_MODEL_NAME: z.string().min(1).max(200).optional(),
  ASK_MODEL_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(20_000),
  /** Where people's mail goes (sign-in links, invitations), e.g. smtp://user:pass@mail.example:587; unset: the local outbox (docs/architecture.md, People). */
  SMTP_URL: z.string().url().refine((u) => /^smtps?:$/.test(new URL(u).protocol), 'must be smtp:// or smtps://').optional(),
  MAIL_FROM: z.string().min(3).max(320).default('MSP Integration <no-reply@localhost>'),
  /** OpenTelemetry traces (src/telemetry): exported over OTLP/HTTP to this collector when set, off otherwise. */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().refine((u) => /^https?:$/.test(new URL(u).protocol) && !new URL(u).search, 'must be an http(s) URL without a query').optional(),
  OTEL_SERVICE_NAME: z.string().min(1).max(200).default('msp-integration-service'),
  /** The ISV's request log (src/requests): `off` records nothing; entries are kept REQUEST_LOG_DAYS, and at most REQUEST_LOG_MAX_ROWS in all. */
  REQUEST_LOG: z.enum(['on', 'off']).default('on'),
  REQUEST_LOG_DAYS: z.coerce.number().int().min(1).max(365).default(14),
  REQUEST_LOG_MAX_ROWS: z.coerce.number().int().min(1000).max(100_000_000).default(1_000_000),
});

export interface AppConfig {
  databaseUrl: string | undefined;
  databaseSchema: string | undefined;
  queueLockMs: number | undefined;
  /** Sync jobs one worker process runs at once, and scheduled checks as many (SYNC_CONCURRENCY). */
  syncConcurrency: number;
  /** PostgreSQL connections per process (DATABASE_POOL_SIZE, or derived from syncConcurrency). */
  databasePoolSize: number;
  queueStalledMs: number | undefined;
  redisUrl: string | undefined;
  role: 'api' | 'worker' | 'all';
  port: number;
  host: string;
  /** Set after listen when PORT is 0. */
  publicUrl: string;
  dataDir: string;
  /** In-memory embedded database (tests); DATA_DIR is not used for the database. */
  ephemeral: boolean;
  sandboxEnabled: boolean;
  sandboxApiKey: string | undefined;
  /** SANDBOX_VENDOR_BASE_URL without its trailing slash; unset: the simulators are reached at publicUrl (see sandboxVendorOrigin). */
  sandboxVendorBaseUrl: string | undefined;
  adminToken: string;
  adminTokenGenerated: boolean;
  encryptionKey: Buffer;
  /** null: derived per connection from its budget (src/budget/connection-budgets.ts). */
  syncIntervalMs: number | null;
  /** Operator's budget overrides by connector name or "*" (VENDOR_BUDGET). */
  vendorBudget: Record<string, { requests_per_hour?: number; concurrent?: number }>;
  queuePrefix: string;
  logLevel: string;
  webhookAllowLoopback: boolean;
  graphqlStacktraces: boolean;
  webhookRetryScale: number;
  /** Requests a minute per API key (0: no limit). */
  rateLimitPerMinute: number;
  authFailuresPerMinute: number;
  mcpMaxAnswerBytes: number;
  /** MCP_ANSWER_BUDGET_TOKENS. */
  mcpAnswerBudgetTokens: number;
  writeWaitMs: number;
  /** How long a sync call waits for its jobs before answering 202 with the sync to poll (SYNC_WAIT_MS). */
  syncWaitMs: number;
  /** What the start should log once (a generated or moved encryption key). Never a secret. */
  startupNotices: string[];
  instanceHeartbeatMs: number;
  /** WORKER_HEARTBEAT_MS and WORKER_HEARTBEAT_STALE_SECONDS (jobs/queue/heartbeat.ts, /readyz). */
  workerHeartbeatMs: number;
  workerHeartbeatStaleSeconds: number;
  /** The HTTP server's bounds on slow clients (src/http/connection-limits.ts). */
  httpLimits: { requestTimeoutMs: number; headersTimeoutMs: number; keepAliveTimeoutMs: number; maxRequestsPerSocket: number; maxConnectionsPerAddress: number };
  /** VENDOR_TIMEOUT_MS and VENDOR_LANDING_MARGIN_MS. */
  vendorTimeoutMs: number;
  vendorLandingMarginMs: number;
  /** The ask model engine, or null (the deterministic parser answers). The key is never logged. */
  askModel: { baseUrl: string; apiKey: string | null; model: string; timeoutMs: number } | null;
  /** SMTP_URL (never logged) and MAIL_FROM; without SMTP_URL mail lands in the local outbox. */
  smtpUrl: string | undefined;
  mailFrom: string;
  /** NODE_ENV=development: the outbox's log line may carry a mail's text (its sign-in link). */
  development: boolean;
  /** Where traces are exported (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME), or null: tracing off. */
  tracing: { endpoint: string; serviceName: string } | null;
  /** REQUEST_LOG, REQUEST_LOG_DAYS and REQUEST_LOG_MAX_ROWS (src/requests). */
  requestLog: { enabled: boolean; days: number; maxRows: number };
}

/**
 * The origin the sandbox connections name and every process (api and worker) calls the simulators at: the
 * configured internal URL, else the public one (one process, or processes on one host). Read it late: the
 * public URL is known only after listen when PORT is 0.
 */
export function sandboxVendorOrigin(config: Pick<AppConfig, 'sandboxVendorBaseUrl' | 'publicUrl'>): string {
  return config.sandboxVendorBaseUrl ?? config.publicUrl;
}

/** The development sandbox key used when SANDBOX_API_KEY is unset (public, like the sandbox data). */
export const DEFAULT_SANDBOX_API_KEY = 'sk_sandbox_0000000000000000000000000000dev';

export class ConfigError extends Error {}

/** DATA_DIR holds the embedded database: owner only, even if it was created (or copied in) looser. */
function ensurePrivateDataDir(dataDir: string): void {
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  fs.chmodSync(dataDir, 0o700);
}

const budgetOverride = z.object({
  requests_per_hour: z.number().int().min(1).optional(),
  concurrent: z.number().int().min(1).optional(),
}).strict();

function parseVendorBudget(raw: string | undefined): AppConfig['vendorBudget'] {
  if (!raw) return {};
  let json: unknown;
  try { json = JSON.parse(raw); } catch { throw new ConfigError('invalid configuration: VENDOR_BUDGET must be JSON'); }
  const parsed = z.record(z.string(), budgetOverride).safeParse(json);
  if (!parsed.success) throw new ConfigError(`invalid configuration: VENDOR_BUDGET: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return parsed.data;
}

/**
 * The pool a process needs when DATABASE_POOL_SIZE is unset. A sync holds a connection only while it reads
 * its state or writes a page (most of its time it waits on its vendor), so syncs share a pool smaller than
 * their number; an api process, which runs no syncs, and small workers keep the floor of 10. Two workers and
 * an api stay well inside PostgreSQL's default of 100 connections.
 */
export function databasePoolSize(role: 'api' | 'worker' | 'all', syncConcurrency: number): number {
  if (role === 'api') return 10;
  return Math.max(10, Math.min(24, Math.ceil(syncConcurrency / 2)));
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<AppConfig> = {}): AppConfig {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`invalid configuration: ${lines}`);
  }
  const e = parsed.data;
  const production = Boolean(e.DATABASE_URL);
  const ephemeral = overrides.ephemeral ?? false;
  const dataDir = path.resolve(overrides.dataDir ?? e.DATA_DIR);

  const startupNotices: string[] = [];
  let encryptionKey: Buffer;
  if (e.ENCRYPTION_KEY) {
    encryptionKey = Buffer.from(e.ENCRYPTION_KEY, 'base64');
    if (encryptionKey.length !== 32) throw new ConfigError('invalid configuration: ENCRYPTION_KEY must be 32 bytes, base64');
  } else if (production && !ephemeral && env.NODE_ENV === 'production') {
    throw new ConfigError('invalid configuration: ENCRYPTION_KEY is required in production');
  } else if (ephemeral) {
    encryptionKey = randomBytes(32);
  } else {
    // Generated once and kept outside DATA_DIR (key-store.ts); a legacy DATA_DIR/encryption.key is moved out.
    ensurePrivateDataDir(dataDir);
    try {
      const loaded = loadOrCreateEncryptionKey(dataDir, env);
      encryptionKey = loaded.key;
      if (loaded.notice) startupNotices.push(loaded.notice);
    } catch (err) {
      if (err instanceof KeyStoreError) throw new ConfigError(`invalid configuration: ENCRYPTION_KEY: ${err.message}`);
      throw err;
    }
  }
  const adminToken = e.ADMIN_TOKEN ?? `adm_${randomBytes(24).toString('base64url')}`;
  const port = overrides.port ?? e.PORT;
  if (e.ASK_MODEL_BASE_URL && !e.ASK_MODEL_NAME) throw new ConfigError('invalid configuration: ASK_MODEL_NAME is required with ASK_MODEL_BASE_URL');
  if (!e.ASK_MODEL_BASE_URL && (e.ASK_MODEL_NAME || e.ASK_MODEL_API_KEY)) throw new ConfigError('invalid configuration: ASK_MODEL_BASE_URL is required to use ASK_MODEL_NAME or ASK_MODEL_API_KEY');
  return {
    databaseUrl: e.DATABASE_URL,
    databaseSchema: e.DATABASE_SCHEMA,
    queueLockMs: e.QUEUE_LOCK_MS,
    syncConcurrency: e.SYNC_CONCURRENCY,
    databasePoolSize: e.DATABASE_POOL_SIZE ?? databasePoolSize(e.SERVICE_ROLE, e.SYNC_CONCURRENCY),
    queueStalledMs: e.QUEUE_STALLED_MS,
    redisUrl: e.REDIS_URL,
    role: e.SERVICE_ROLE,
    port,
    host: e.HOST,
    publicUrl: (e.PUBLIC_URL ?? `http://127.0.0.1:${port}`).replace(/\/$/, ''),
    dataDir,
    ephemeral,
    sandboxEnabled: e.SANDBOX === 'true',
    sandboxApiKey: e.SANDBOX_API_KEY ?? (e.SANDBOX === 'true' ? DEFAULT_SANDBOX_API_KEY : undefined),
    sandboxVendorBaseUrl: e.SANDBOX_VENDOR_BASE_URL?.replace(/\/+$/, ''),
    adminToken,
    adminTokenGenerated: !e.ADMIN_TOKEN,
    encryptionKey,
    syncIntervalMs: e.SYNC_INTERVAL_SECONDS != null ? e.SYNC_INTERVAL_SECONDS * 1000 : null,
    vendorBudget: parseVendorBudget(e.VENDOR_BUDGET),
    queuePrefix: e.QUEUE_PREFIX,
    logLevel: e.LOG_LEVEL,
    webhookAllowLoopback: e.WEBHOOK_ALLOW_LOOPBACK === 'true',
    graphqlStacktraces: e.GRAPHQL_STACKTRACES === 'true' && env.NODE_ENV === 'development',
    webhookRetryScale: e.WEBHOOK_RETRY_SCALE,
    rateLimitPerMinute: e.RATE_LIMIT_PER_MINUTE ?? (e.SANDBOX === 'true' ? 6000 : 1200),
    authFailuresPerMinute: e.AUTH_FAILURES_PER_MINUTE,
    mcpMaxAnswerBytes: e.MCP_MAX_ANSWER_BYTES,
    mcpAnswerBudgetTokens: e.MCP_ANSWER_BUDGET_TOKENS,
    writeWaitMs: e.WRITE_WAIT_MS,
    syncWaitMs: e.SYNC_WAIT_MS,
    startupNotices,
    instanceHeartbeatMs: e.INSTANCE_HEARTBEAT_MS,
    workerHeartbeatMs: e.WORKER_HEARTBEAT_MS,
    workerHeartbeatStaleSeconds: e.WORKER_HEARTBEAT_STALE_SECONDS,
    httpLimits: {
      requestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_MS, headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS, keepAliveTimeoutMs: e.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      maxRequestsPerSocket: e.HTTP_MAX_REQUESTS_PER_SOCKET, maxConnectionsPerAddress: e.MAX_CONNECTIONS_PER_ADDRESS,
    },
    vendorTimeoutMs: e.VENDOR_TIMEOUT_MS,
    vendorLandingMarginMs: e.VENDOR_LANDING_MARGIN_MS,
    askModel: e.ASK_MODEL_BASE_URL
      ? { baseUrl: e.ASK_MODEL_BASE_URL.replace(/\/+$/, ''), apiKey: e.ASK_MODEL_API_KEY ?? null, model: e.ASK_MODEL_NAME!, timeoutMs: e.ASK_MODEL_TIMEOUT_MS }
      : null,
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    development: env.NODE_ENV === 'development',
    tracing: e.OTEL_EXPORTER_OTLP_ENDPOINT ? { endpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT, serviceName: e.OTEL_SERVICE_NAME } : null,
    requestLog: { enabled: e.REQUEST_LOG === 'on', days: e.REQUEST_LOG_DAYS, maxRows: e.REQUEST_LOG_MAX_ROWS },
    ...overrides,
  };
}
