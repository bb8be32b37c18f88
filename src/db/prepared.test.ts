import type { Pool } from 'pg';
import { openDatabase } from './database';
import { preparedQuery } from './prepared';
import { testDatabaseOptions } from '../../test/support/runtime';

describe('prepared statements of the write path', () => {
  it('answer like a plain query, and still do after the pool opens a new connection', async () => {
    const db = await openDatabase(testDatabaseOptions());
    try {
      const text = 'SELECT $1::text AS echo, $2::int + 1 AS next';
      expect(await preparedQuery(db.dataSource, text, ['a', 1])).toEqual([{ echo: 'a', next: 2 }]);
      // The connection goes (as after the pool's idle timeout) and a new one opens. On the embedded
      // database that is the same session, which still holds the statement prepared above: without
      // dropping it at connect, preparing it again fails ("prepared statement ... already exists").
      const pool = (db.dataSource.driver as unknown as { master: Pool }).master;
      const client = await pool.connect();
      client.release(true);
      // The embedded database serves one connection at a time: the new one waits until the old one has closed.
      expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      expect(await preparedQuery(db.dataSource, text, ['b', 2])).toEqual([{ echo: 'b', next: 3 }]);
      // A statement the database refuses leaves the connection as it was: the next one answers at once.
      await expect(preparedQuery(db.dataSource, 'SELECT 1 / $1::int AS x', [0])).rejects.toThrow(/division by zero/);
      expect(await preparedQuery(db.dataSource, text, ['c', 3])).toEqual([{ echo: 'c', next: 4 }]);
      // TypeORM's own queries share the pool and still work beside it.
      expect(await db.dataSource.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    } finally {
      await db.close();
    }
  });

  it('issued together, each answers its own rows or its own error, in any number', async () => {
    const db = await openDatabase(testDatabaseOptions());
    try {
      const text = 'SELECT $1::int * 2 AS twice';
      const answers = await Promise.allSettled(Array.from({ length: 40 }, (_, i) =>
        i % 10 === 3 ? preparedQuery(db.dataSource, 'SELECT 1 / $1::int AS x', [0]) : preparedQuery(db.dataSource, text, [i])));
      answers.forEach((a, i) => {
        if (i % 10 === 3) expect(a).toMatchObject({ status: 'rejected', reason: expect.objectContaining({ message: 'division by zero' }) });
        else expect(a).toEqual({ status: 'fulfilled', value: [{ twice: i * 2 }] });
      });
      // Writes issued together each commit on their own: the one refused leaves the others in.
      await db.dataSource.query('CREATE TABLE prepared_batch (k int PRIMARY KEY)');
      const insert = 'INSERT INTO prepared_batch (k) VALUES ($1) RETURNING k';
      const keys = [1, 2, 1, 3];
      const writes = await Promise.allSettled(keys.map((k) => preparedQuery(db.dataSource, insert, [k])));
      // Exactly one write of k = 1 is refused (on PostgreSQL they run on separate connections: either may land first).
      expect(writes.map((w, i) => `${keys[i]} ${w.status}`).sort()).toEqual(['1 fulfilled', '1 rejected', '2 fulfilled', '3 fulfilled']);
      expect(writes.find((w) => w.status === 'rejected')).toMatchObject({ reason: expect.objectContaining({ message: expect.stringMatching(/duplicate key/) }) });
      expect(await db.dataSource.query('SELECT k FROM prepared_batch ORDER BY k')).toEqual([{ k: 1 }, { k: 2 }, { k: 3 }]);
    } finally {
      await db.close();
    }
  });

  it('carries values of megabytes whole, beside small statements issued with them', async () => {
    const db = await openDatabase(testDatabaseOptions());
    try {
      // A sync page is megabytes: it reaches the embedded database in many reads, joined once it is whole.
      const big = Array.from({ length: 3 }, (_, i) => `${i}:` + 'x'.repeat(3 * 1024 * 1024 + i));
      const text = 'SELECT length($1::text) AS n, left($1::text, 2) AS head, right($1::text, 1) AS tail';
      const answers = await Promise.all([
        ...big.map((v) => preparedQuery(db.dataSource, text, [v])),
        preparedQuery(db.dataSource, 'SELECT $1::int + 1 AS next', [41]),
      ]);
      expect(answers).toEqual([
        ...big.map((v, i) => [{ n: v.length, head: `${i}:`, tail: 'x' }]),
        [{ next: 42 }],
      ]);
      expect(await db.dataSource.query('SELECT length($1::text) AS n', ['y'.repeat(5_000_000)])).toEqual([{ n: 5_000_000 }]);
    } finally {
      await db.close();
    }
  });

  it('never run inside a transaction that holds the connection when they are issued', async () => {
    const db = await openDatabase(testDatabaseOptions());
    try {
      await db.dataSource.query('CREATE TABLE prepared_tx (k int)');
      const tx = db.dataSource.createQueryRunner();
      await tx.connect();
      await tx.startTransaction();
      await tx.query('INSERT INTO prepared_tx VALUES (1)');
      // On the embedded database the transaction holds its one connection: these wait for it, and must
      // then run on their own, not on the transaction's connection before it ends.
      const reads = [1, 2, 3].map(() => preparedQuery<{ k: number }>(db.dataSource, 'SELECT k FROM prepared_tx', []));
      const written = preparedQuery(db.dataSource, 'INSERT INTO prepared_tx VALUES ($1) RETURNING k', [2]);
      await new Promise((r) => setTimeout(r, 50));
      await tx.rollbackTransaction();
      await tx.release();
      // None saw the transaction's own row (the INSERT beside them may have landed first on PostgreSQL).
      for (const rows of await Promise.all(reads)) expect(rows.filter((r) => r.k === 1)).toEqual([]);
      expect(await written).toEqual([{ k: 2 }]);
      // The transaction's row is gone with it; the statement issued during it stayed.
      expect(await db.dataSource.query('SELECT k FROM prepared_tx')).toEqual([{ k: 2 }]);
    } finally {
      await db.close();
    }
  });
});
