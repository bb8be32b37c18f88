/**
 * /readyz says ready only when the schema answers through the service's own connections: a
 * database that still answers `SELECT 1` while the tables the API reads are gone is not ready.
 */
import { startTestService, type TestService } from './support/service';

let svc: TestService;
beforeAll(async () => { svc = await startTestService(); }, 120_000);
afterAll(async () => { await svc?.close(); });

it('answers 503 while the schema query fails, and ready again once it answers', async () => {
  expect(await svc.api('/readyz', { key: null })).toMatchObject({ status: 200, body: { status: 'ready', database: true } });
  await svc.services.ds.query('ALTER TABLE tenants RENAME TO tenants_moved');
  try {
    expect(await svc.services.ds.query('SELECT 1 AS one')).toEqual([{ one: 1 }]); // the server itself still answers
    const res = await svc.api('/readyz', { key: null });
    expect(res).toMatchObject({ status: 503, body: { status: 'not_ready', database: false } });
  } finally {
    await svc.services.ds.query('ALTER TABLE tenants_moved RENAME TO tenants');
  }
  expect(await svc.api('/readyz', { key: null })).toMatchObject({ status: 200, body: { status: 'ready' } });
});
