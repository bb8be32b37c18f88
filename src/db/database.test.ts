import { MIGRATIONS } from '../../entities/migrations';
import { openDatabase } from './database';
import { runtime, testDatabaseOptions } from '../../test/support/runtime';

describe('store', () => {
  it('runs the migrations at open and the entities match them exactly (no drift)', async () => {
    const db = await openDatabase(testDatabaseOptions());
    try {
      const applied = await db.dataSource.query('SELECT name FROM migrations');
      expect(applied.map((r: { name: string }) => r.name)).toEqual(MIGRATIONS.map((M) => new M().name));
      const pending = await db.dataSource.driver.createSchemaBuilder().log();
      expect(pending.upQueries.map((q) => q.query)).toEqual([]);
    } finally {
      await db.close();
    }
  });

  it('keeps synced records unique on (tenant, connection, source_id)', async () => {
    const db = await openDatabase(testDatabaseOptions());
    try {
      const row = {
        tenant_id: '00000000-0000-0000-0000-000000000001', connection_id: '00000000-0000-0000-0000-000000000002',
        source_id: '42', raw: '{}', raw_hash: 'h', synced_at: new Date(), hostname: 'pc',
      };
      const insert = () => db.dataSource.query(
        'INSERT INTO devices (tenant_id, connection_id, source_id, raw, raw_hash, synced_at, hostname) VALUES ($1,$2,$3,$4,$5,$6,$7)',
        Object.values(row),
      );
      await insert();
      await expect(insert()).rejects.toThrow(/uq_devices_source|duplicate key/);
    } finally {
      await db.close();
    }
  });

  // Compose starts the api and the worker together on one empty database, and `--scale api=2` more.
  (runtime.databaseUrl ? it : it.skip)('migrates once when several processes open one empty schema at the same time', async () => {
    const opts = testDatabaseOptions();
    const opened = await Promise.allSettled([0, 1, 2].map(() => openDatabase({ ...opts, dropSchemaOnClose: false })));
    try {
      expect(opened.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
      const db = (opened[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof openDatabase>>>).value;
      const applied = await db.dataSource.query('SELECT name FROM migrations');
      expect(applied.length).toBe(MIGRATIONS.length);
    } finally {
      const dbs = opened.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
      for (const db of dbs.slice(1)) await db.close();
      if (dbs[0]) {
        await dbs[0].dataSource.query(`DROP SCHEMA IF EXISTS "${opts.schema}" CASCADE`);
        await dbs[0].close();
      }
    }
  });
});
