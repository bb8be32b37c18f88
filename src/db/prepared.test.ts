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
      // The embedded socket server takes one connection and frees its slot once it has seen the close.
      for (let i = 0; i < 50; i++) {
        try { await pool.query('SELECT 1'); break; } catch (err) {
          if (!['ECONNRESET', 'EPIPE'].includes((err as { code?: string }).code ?? '') || i === 49) throw err;
          await new Promise((r) => setTimeout(r, 50));
        }
      }
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
});
