import { openDatabase } from './database';
import { testDatabaseOptions } from '../../test/support/runtime';

describe('store', () => {
  it('runs the migrations at open and the entities match them exactly (no drift)', async () => {
    const db = await openDatabase(testDatabaseOptions());
    try {
      const applied = await db.dataSource.query('SELECT name FROM migrations');
      expect(applied.map((r: { name: string }) => r.name)).toEqual(['InitialSchema1763780000000', 'ProductsAndSubscriptions1763790000000']);
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
});
