/**
 * Statements of the write path, and the page of a record list (src/records/records.store.ts), run as
 * named prepared statements, straight on the driver's pg pool: each connection parses and plans a
 * statement once, not at every call. Measured on this machine, one
 * call at p50: the company lookup of a ticket create 1.21 -> 0.65 ms on the embedded database and
 * 0.69 -> 0.45 ms on PostgreSQL; the reservation INSERT 0.43 -> 0.28 and 0.45 -> 0.35 ms.
 *
 * On a pipelined pool (the embedded database: one connection, database.ts), the statements that wait
 * for that connection go to the database together once it is free, each with its own Sync, and their
 * answers come back in one round trip: a ticket create's company lookup, priority list and reservation
 * cost one round trip instead of three. Each statement still commits, or fails, on its own. On
 * PostgreSQL's pool, statements issued together run side by side on connections of their own.
 *
 * Only for SQL texts that are fixed, or drawn from a small fixed set (the name derives from the text);
 * values always go as parameters. A statement left prepared in the embedded database's one shared
 * session by an earlier connection is dropped when a connection opens (database.ts).
 */
import { createHash } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { Pool, PoolClient } from 'pg';

const names = new Map<string, string>();

function statementName(text: string): string {
  let name = names.get(text);
  if (!name) names.set(text, (name = `w_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`));
  return name;
}

interface Waiting { text: string; values: unknown[]; resolve(rows: unknown[]): void; reject(err: unknown): void }

/** Per pipelined pool: the statements waiting for its connection, sent together once it is checked out. */
const waiting = new WeakMap<Pool, Waiting[]>();

function run(client: PoolClient, text: string, values: unknown[]) {
  return client.query({ name: statementName(text), text, values });
}

/** The rows of one prepared statement (those of RETURNING for a write). */
export async function preparedQuery<T = Record<string, unknown>>(ds: DataSource, text: string, values: unknown[]): Promise<T[]> {
  // TypeORM's PostgresDriver keeps its pg pool as `master`; the pool's type parsers are the ones TypeORM set.
  const pool = (ds.driver as unknown as { master: Pool }).master;
  if ((pool.options as { pipeline?: boolean }).pipeline) {
    return new Promise<T[]>((resolve, reject) => {
      const statement: Waiting = { text, values, resolve: resolve as (rows: unknown[]) => void, reject };
      const batch = waiting.get(pool);
      if (batch) batch.push(statement);
      else { waiting.set(pool, [statement]); void sendTogether(pool); }
    });
  }
  const client = await pool.connect();
  try {
    return (await run(client, text, values)).rows as T[];
  } finally {
    // Back to the pool even when the statement failed, as TypeORM does (pool.query would end the
    // connection on any SQL error, and the embedded database's one socket would then refuse the next one
    // until it has seen the close). pg-pool itself drops a client whose connection broke.
    client.release();
  }
}

/** Checks the connection out, then sends every statement that joined while it waited, pipelined. */
async function sendTogether(pool: Pool): Promise<void> {
  let client: PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    for (const s of take(pool)) s.reject(err);
    return;
  }
  // pg writes each query on its own (cork and uncork per query): corked around the batch, the statements
  // leave in one write, so the database process is woken once and runs them in one call (embedded-cluster.ts).
  const stream = (client as unknown as { connection: { stream: { cork(): void; uncork(): void } } }).connection.stream;
  stream.cork();
  // Each caller has its answer as soon as it arrives; the connection goes back once all have.
  const answered = take(pool).map((s) => {
    try {
      return run(client, s.text, s.values).then((r) => s.resolve(r.rows), s.reject);
    } catch (err) {
      s.reject(err);
      return undefined;
    }
  });
  stream.uncork();
  await Promise.all(answered);
  client.release();
}

function take(pool: Pool): Waiting[] {
  const batch = waiting.get(pool) ?? [];
  waiting.delete(pool);
  return batch;
}
