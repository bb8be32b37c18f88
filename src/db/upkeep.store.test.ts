import pino from 'pino';
import { openDatabase, type Database } from './database';
import { StoreUpkeep } from './upkeep.store';
import { runtime, testDatabaseOptions } from '../../test/support/runtime';

const logger = pino({ level: 'silent' });

/** How many rows the planner expects a range on the probe table's indexed column to match (10 do). */
async function expectedRows(db: Database): Promise<number> {
  const rows: { 'QUERY PLAN': string }[] = await db.dataSource.query('EXPLAIN SELECT * FROM upkeep_probe WHERE due <= 10');
  return Number(/rows=(\d+)/.exec(rows[0]['QUERY PLAN'])?.[1]);
}

describe('the store\'s upkeep where the database does none', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openDatabase(testDatabaseOptions());
  });
  afterAll(async () => {
    await db.close();
  });

  it('vacuums a churned table and gives it statistics, so the planner sizes a range on it as it is', async () => {
    const ds = db.dataSource;
    const upkeep = new StoreUpkeep(ds, db.kind === 'embedded', logger);
    // As a scheduler's table is used: every row rewritten again and again (every check moves its next check).
    const churn = ds.createQueryRunner();
    try {
      // Out of the database's autovacuum, as a PostgreSQL with it off (or PGlite, which has none) leaves every table.
      await churn.query('CREATE TABLE upkeep_probe (id int PRIMARY KEY, due int NOT NULL, note text) WITH (autovacuum_enabled = false)');
      await churn.query('CREATE INDEX ix_upkeep_probe_due ON upkeep_probe (due)');
      await churn.query(`INSERT INTO upkeep_probe SELECT g, g, 'x' FROM generate_series(1, 3000) g`);
      for (let i = 0; i < 3; i++) await churn.query(`UPDATE upkeep_probe SET note = note || 'x'`);
      // The session's counts reach the statistics system now, not when it next goes idle.
      await churn.query('SELECT pg_stat_force_next_flush()');
      await churn.query('SELECT 1');
    } finally {
      await churn.release();
    }
    const before = await expectedRows(db);
    const done = await upkeep.runOnce();
    // Without statistics the planner takes a third of the table to match (and of its dead versions too), and
    // plans a scan of the table where a few index entries would do.
    expect(before).toBeGreaterThan(900);
    expect(done).toContainEqual({ table: 'upkeep_probe', action: 'vacuum' });
    const [stats] = await ds.query(`SELECT n_dead_tup::int AS dead, last_vacuum IS NOT NULL AS vacuumed, last_analyze IS NOT NULL AS analyzed
                                      FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname = 'upkeep_probe'`);
    expect(stats).toEqual({ dead: 0, vacuumed: true, analyzed: true });
    expect(await expectedRows(db)).toBeLessThan(50);
    // Nothing left above the thresholds: the next look does nothing to it.
    expect((await upkeep.runOnce()).filter((d) => d.table === 'upkeep_probe')).toEqual([]);
  });

  (runtime.databaseUrl ? it : it.skip)('leaves the work to the process already at it (two workers on one database)', async () => {
    const ds = db.dataSource;
    const churn = ds.createQueryRunner();
    const other = ds.createQueryRunner();
    try {
      for (let i = 0; i < 3; i++) await churn.query(`UPDATE upkeep_probe SET note = note || 'y'`);
      await churn.query('SELECT pg_stat_force_next_flush()');
      await churn.query('SELECT 1');
      // Another process's upkeep is under way: it holds the lock.
      await other.query(`SELECT pg_advisory_lock(hashtext('store-upkeep:' || current_schema()))`);
      expect(await new StoreUpkeep(ds, false, logger).runOnce()).toEqual([]);
      await other.query(`SELECT pg_advisory_unlock(hashtext('store-upkeep:' || current_schema()))`);
      expect(await new StoreUpkeep(ds, false, logger).runOnce()).toContainEqual({ table: 'upkeep_probe', action: 'vacuum' });
    } finally {
      await churn.release();
      await other.release();
    }
  });

  (runtime.databaseUrl ? it : it.skip)('leaves a table to the database\'s autovacuum where that runs and the table does not opt out', async () => {
    const ds = db.dataSource;
    const churn = ds.createQueryRunner();
    try {
      await churn.query('ALTER TABLE upkeep_probe RESET (autovacuum_enabled)');
      for (let i = 0; i < 3; i++) await churn.query(`UPDATE upkeep_probe SET note = note || 'z'`);
      await churn.query('SELECT pg_stat_force_next_flush()');
      await churn.query('SELECT 1');
      const [{ own }] = await ds.query(`SELECT current_setting('autovacuum') = 'on' AS own`);
      const done = (await new StoreUpkeep(ds, false, logger).runOnce()).filter((d) => d.table === 'upkeep_probe');
      // The server's setting decides, whichever it is here: kept by it, or vacuumed by the upkeep.
      expect(done).toEqual(own === true ? [] : [{ table: 'upkeep_probe', action: 'vacuum' }]);
    } finally {
      await churn.release();
    }
  });
});
