/**
 * The store: TypeORM over PostgreSQL. With DATABASE_URL unset, PostgreSQL is PGlite (embedded,
 * WASM) kept under DATA_DIR and served on a loopback socket, so the service talks the same wire
 * protocol and runs the same SQL and migrations either way.
 */
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import fs from 'node:fs';
import path from 'node:path';
import { DataSource } from 'typeorm';
import { ALL_ENTITIES } from '../../entities';
import { MIGRATIONS } from '../../entities/migrations';

export interface Database {
  dataSource: DataSource;
  kind: 'embedded' | 'postgres';
  /** Connection URL (embedded: the loopback socket of PGlite). */
  url: string;
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

async function startEmbedded(dataDir: string | undefined): Promise<{ url: string; stop: () => Promise<void> }> {
  let db: PGlite;
  if (dataDir) {
    fs.mkdirSync(dataDir, { recursive: true });
    db = await PGlite.create(path.join(dataDir, 'pg'));
  } else {
    db = await PGlite.create();
  }
  // One connection: PGlite is single-session, and interleaving extended-protocol messages from
  // several sockets is not safe. The pool below is sized 1 to match.
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 1 });
  await server.start();
  const addr = (server as unknown as { port: number }).port;
  return {
    url: `postgres://postgres@127.0.0.1:${addr}/postgres`,
    stop: async () => {
      await server.stop();
      await db.close();
    },
  };
}

export async function openDatabase(opts: DatabaseOptions): Promise<Database> {
  let url = opts.databaseUrl;
  let stopEmbedded: (() => Promise<void>) | undefined;
  if (!url) {
    const embedded = await startEmbedded(opts.dataDir);
    url = embedded.url;
    stopEmbedded = embedded.stop;
  }
  const embedded = Boolean(stopEmbedded);
  if (opts.schema) {
    const boot = new DataSource({ type: 'postgres', url });
    await boot.initialize();
    await boot.query(`CREATE SCHEMA IF NOT EXISTS "${opts.schema}"`);
    await boot.destroy();
  }
  const dataSource = new DataSource({
    type: 'postgres',
    url,
    schema: opts.schema,
    entities: ALL_ENTITIES,
    migrations: MIGRATIONS,
    migrationsRun: true,
    uuidExtension: 'pgcrypto',
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: false,
    extra: {
      max: embedded ? 1 : (opts.poolSize ?? 10),
      ...(opts.schema ? { options: `-c search_path="${opts.schema}"` } : {}),
    },
  });
  await dataSource.initialize();
  return {
    dataSource,
    kind: embedded ? 'embedded' : 'postgres',
    url,
    close: async () => {
      if (dataSource.isInitialized) await dataSource.destroy();
      if (opts.schema && opts.dropSchemaOnClose && !embedded) {
        const drop = new DataSource({ type: 'postgres', url: url! });
        await drop.initialize();
        await drop.query(`DROP SCHEMA IF EXISTS "${opts.schema}" CASCADE`);
        await drop.destroy();
      }
      await stopEmbedded?.();
    },
  };
}
