/**
 * The store: TypeORM over PostgreSQL. With DATABASE_URL unset, PostgreSQL is PGlite (embedded,
 * WASM) kept under DATA_DIR (owner-only modes), run in a child process of the service
 * (embedded-cluster.ts) and served on a Unix socket in a private directory, so the service talks
 * the same wire protocol and runs the same SQL and migrations either way.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DataSource } from 'typeorm';
import { ALL_ENTITIES } from '../../entities';
import { MIGRATIONS } from '../../entities/migrations';
import { startEmbeddedCluster } from './embedded-cluster';

export interface Database {
  dataSource: DataSource;
  kind: 'embedded' | 'postgres';
  /** Connection URL (embedded: the Unix socket directory of PGlite, URL-encoded as the host). */
  url: string;
  /** Embedded only: the 0700 directory holding PGlite's Unix socket (no TCP listener). */
  socketDir?: string;
  /** Embedded only: the database process. */
  embeddedPid?: number;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string;
  /** Embedded only: directory for the PGlite files; undefined keeps it in memory. */
  dataDir?: string;
  /** Postgres only: run inside this schema (created if missing), for isolated test databases. */
  schema?: string;
  /** Drop `schema` on close (throwaway test databases). */
  dropSchemaOnClose?: boolean;
  poolSize?: number;
}

/** Where pg finds the embedded server: a Unix socket `<dir>/.s.PGSQL.<port>`. */
interface EmbeddedEndpoint { socketDir: string; port: number }

const EMBEDDED_PORT = 5432;

/**
 * Owner-only modes for PGlite's files. Its WASM file layer creates files 0666 whatever the umask,
 * so the sweep runs after open and at close; files created in between sit inside a 0700 directory,
 * which nobody else can enter.
 */
export function restrictTree(dir: string): void {
  fs.chmodSync(dir, 0o700);
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) restrictTree(p);
    else if (entry.isFile()) fs.chmodSync(p, 0o600);
  }
}

async function startEmbedded(dataDir: string | undefined): Promise<{ endpoint: EmbeddedEndpoint; pid: number; stop: () => Promise<void> }> {
  let pgDir: string | undefined;
  if (dataDir) {
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    fs.chmodSync(dataDir, 0o700);
    pgDir = path.join(dataDir, 'pg');
    fs.mkdirSync(pgDir, { recursive: true, mode: 0o700 });
  }
  // PGlite is one superuser session with no password: it is served on a Unix socket in a fresh
  // 0700 directory (mkdtemp), never on TCP, so only this service's user can reach it. A temp
  // directory keeps the socket path under the 107-byte limit whatever DATA_DIR is.
  const socketDir = fs.mkdtempSync(path.join(os.tmpdir(), 'msp-pg-'));
  fs.chmodSync(socketDir, 0o700);
  let cluster;
  try {
    cluster = await startEmbeddedCluster(pgDir, path.join(socketDir, `.s.PGSQL.${EMBEDDED_PORT}`));
  } catch (err) {
    fs.rmSync(socketDir, { recursive: true, force: true });
    throw err;
  }
  if (pgDir) restrictTree(pgDir);
  return {
    endpoint: { socketDir, port: EMBEDDED_PORT },
    pid: cluster.pid,
    stop: async () => {
      await cluster.stop();
      fs.rmSync(socketDir, { recursive: true, force: true });
      if (pgDir) restrictTree(pgDir);
    },
  };
}

/** The longest a statement may go unanswered on PostgreSQL before it fails (503 to the caller): far above any statement's normal time. */
export const QUERY_TIMEOUT_MS = 20_000;

/**
 * Applies pending migrations while holding a PostgreSQL advisory lock named after the schema, so that of
 * several processes starting on one database one migrates and the others wait, then find nothing to do.
 * The lock belongs to one session: it is taken and freed on one dedicated connection.
 */
async function runMigrationsLocked(dataSource: DataSource, schema: string): Promise<void> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  const key = `msp-integration-service migrations ${schema}`;
  try {
    // Tried, not waited on in one statement: every statement has a time limit (QUERY_TIMEOUT_MS), and
    // another process's migrations may take longer than that. Bounded: 10 minutes.
    for (let i = 0; ; i++) {
      const [row]: { locked: boolean }[] = await runner.query('SELECT pg_try_advisory_lock(hashtext($1)) AS locked', [key]);
      if (row?.locked) break;
      if (i >= 3000) throw new Error('another process has held the migration lock for 10 minutes');
      await new Promise((r) => setTimeout(r, 200));
    }
    try {
      await dataSource.runMigrations({ transaction: 'each' });
    } finally {
      await runner.query('SELECT pg_advisory_unlock(hashtext($1))', [key]);
    }
  } finally {
    await runner.release();
  }
}

/** Drops a schema and all in it on the PostgreSQL server at `databaseUrl` (a store's dropSchemaOnClose, and tests' stores whose service was killed). */
export async function dropSchema(databaseUrl: string, schema: string): Promise<void> {
  const drop = new DataSource({ type: 'postgres', url: databaseUrl });
  await drop.initialize();
  try { await drop.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`); } finally { await drop.destroy(); }
}

export async function openDatabase(opts: DatabaseOptions): Promise<Database> {
  let stopEmbedded: (() => Promise<void>) | undefined;
  let embeddedPid: number | undefined;
  let endpoint: EmbeddedEndpoint | undefined;
  if (!opts.databaseUrl) {
    const started = await startEmbedded(opts.dataDir);
    endpoint = started.endpoint;
    stopEmbedded = started.stop;
    embeddedPid = started.pid;
  }
  const embedded = Boolean(endpoint);
  // pg reads a host that starts with '/' as the directory of a Unix socket.
  const target = endpoint
    ? { host: endpoint.socketDir, port: endpoint.port, username: 'postgres', database: 'postgres' }
    : { url: opts.databaseUrl! };
  const url = endpoint ? `postgres://postgres@${encodeURIComponent(endpoint.socketDir)}:${endpoint.port}/postgres` : opts.databaseUrl!;
  if (opts.schema) {
    const boot = new DataSource({ type: 'postgres', ...target });
    await boot.initialize();
    // IF NOT EXISTS is not atomic: a process starting beside this one may create it between the check
    // and the insert, which PostgreSQL reports as a unique violation (23505) of pg_namespace.
    await boot.query(`CREATE SCHEMA IF NOT EXISTS "${opts.schema}"`).catch((err: { driverError?: { code?: string } }) => {
      if (err?.driverError?.code !== '23505') throw err;
    });
    await boot.destroy();
  }
  // Every new connection sets its search_path before first use rather than inheriting whatever the
  // server (or, for PGlite's single session, an earlier connection) left behind. A SET, not the
  // startup `options`: PGlite applies those once for the life of its session, not per connection.
  const searchPath = opts.schema ? `"${opts.schema}"` : (embedded ? 'public' : undefined);
  const dataSource = new DataSource({
    type: 'postgres',
    ...target,
    schema: opts.schema,
    entities: ALL_ENTITIES,
    migrations: MIGRATIONS,
    // Run below, under a lock: processes starting together (compose's api and worker, `--scale api=2`)
    // would otherwise apply the same migration at once and one of them would fail on it.
    migrationsRun: false,
    uuidExtension: 'pgcrypto',
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: false,
    extra: {
      max: embedded ? 1 : (opts.poolSize ?? 10),
      // A server that does not answer fails the request within seconds (503 service_unavailable,
      // src/http/dependency-errors.ts) instead of holding it: a new connection, or a wait for a free one.
      // A statement on a connection whose server went silent (a network partition) fails too, within
      // QUERY_TIMEOUT_MS, and TCP keepalive finds a dead peer, instead of the request hanging until the
      // link returns.
      ...(embedded ? {} : { connectionTimeoutMillis: 10_000, query_timeout: QUERY_TIMEOUT_MS, keepAlive: true, keepAliveInitialDelayMillis: 10_000 }),
      // One connection to one session: statements queued for it are sent without waiting for the answer
      // of the one before (prepared.ts). Queries inside one checkout (TypeORM's) still go one by one.
      ...(embedded ? { pipeline: true } : {}),
      // The embedded database is one session across connections: what an earlier connection prepared
      // is dropped first (prepared.ts names statements per connection).
      ...(searchPath ? { onConnect: (client: { query(sql: string): Promise<unknown> }) => client.query(`${embedded ? 'DEALLOCATE ALL; ' : ''}SET search_path TO ${searchPath}`) } : {}),
    },
  });
  try {
    await dataSource.initialize();
    // The embedded database belongs to this process alone (and its pool has one connection).
    if (embedded) await dataSource.runMigrations({ transaction: 'each' });
    else await runMigrationsLocked(dataSource, opts.schema ?? 'public');
  } catch (err) {
    await stopEmbedded?.().catch(() => undefined);
    throw err;
  }
  return {
    dataSource,
    kind: embedded ? 'embedded' : 'postgres',
    url,
    socketDir: endpoint?.socketDir,
    embeddedPid,
    close: async () => {
      if (dataSource.isInitialized) await dataSource.destroy();
      if (opts.schema && opts.dropSchemaOnClose && !embedded) await dropSchema(url, opts.schema);
      await stopEmbedded?.();
    },
  };
}
