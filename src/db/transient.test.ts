/**
 * Two transactions that lock two rows in opposite orders deadlock on PostgreSQL: the victim fails with
 * 40P01 alone, and runs again (and commits) inside retryingTransient. Needs a real server (DATABASE_URL):
 * the embedded database is one session and cannot deadlock.
 */
import { DataSource } from 'typeorm';
import { uniqueSuffix } from '../../test/support/runtime';
import { isTransientTransactionError, retryingTransient } from './transient';

const url = process.env.DATABASE_URL || undefined;
const onPostgres = url ? describe : describe.skip;

onPostgres('on PostgreSQL', () => {
  const schema = `t_dl_${uniqueSuffix()}`;
  let ds: DataSource;
  beforeAll(async () => {
    ds = new DataSource({ type: 'postgres', url, extra: { max: 4 } });
    await ds.initialize();
    await ds.query(`CREATE SCHEMA "${schema}"`);
    await ds.query(`CREATE TABLE "${schema}".rows (id int PRIMARY KEY, n int NOT NULL)`);
    await ds.query(`INSERT INTO "${schema}".rows VALUES (1, 0), (2, 0)`);
  });
  afterAll(async () => {
    await ds?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await ds?.destroy();
  });

  /** Locks `first` then, once the other transaction holds its first row too, `second`. */
  function crossing(first: number, second: number, barrier: { arrived: number }) {
    return () => ds.transaction(async (m) => {
      await m.query(`UPDATE "${schema}".rows SET n = n + 1 WHERE id = $1`, [first]);
      barrier.arrived++;
      for (let i = 0; i < 200 && barrier.arrived < 2; i++) await new Promise((r) => setTimeout(r, 10));
      await m.query(`UPDATE "${schema}".rows SET n = n + 1 WHERE id = $1`, [second]);
    });
  }

  it('without the retry one of them fails with deadlock_detected', async () => {
    const barrier = { arrived: 0 };
    const outcomes = await Promise.allSettled([crossing(1, 2, barrier)(), crossing(2, 1, barrier)()]);
    const failed = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(failed).toHaveLength(1);
    expect(isTransientTransactionError(failed[0].reason)).toBe(true);
  });

  it('with it both commit', async () => {
    const [before] = await ds.query(`SELECT sum(n)::int AS n FROM "${schema}".rows`);
    const barrier = { arrived: 0 };
    await Promise.all([retryingTransient(crossing(1, 2, barrier)), retryingTransient(crossing(2, 1, barrier))]);
    const [after] = await ds.query(`SELECT sum(n)::int AS n FROM "${schema}".rows`);
    expect(after.n - before.n).toBe(4);
  });
});
