/**
 * /readyz says ready only when the schema answers through the service's own connections: a
 * database that still answers `SELECT 1` while the tables the API reads are gone is not ready.
 */
import { startTestService, type TestService } from './support/service';
import { freePort } from './support/runtime';

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

/**
 * Readiness of the sandbox (docs/architecture.md, Sandbox): the server listens before the sandbox is
 * seeded and synced, and says so. Polled from outside while the start runs: every answer before the first
 * sync finished is 503, the first 200 comes once it has, and nothing goes back to 503 after it.
 */
it('answers 503 until the sandbox is seeded and its first sync finished, then 200', async () => {
  const port = await freePort();
  let started = false;
  const starting = startTestService({ port }).then((s) => { started = true; return s; });
  const seen: { status: number; sandbox?: boolean }[] = [];
  let late: TestService | undefined;
  try {
    for (let i = 0; i < 3000 && !started; i++) {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null);
      if (res) {
        const body = await res.json() as { sandbox?: boolean };
        seen.push({ status: res.status, sandbox: body.sandbox });
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    late = await starting;
    const first503 = seen.findIndex((s) => s.status === 503);
    expect(first503).toBe(0);
    expect(seen[0].sandbox).toBe(false);
    // A 200 seen while the start was still running came after the first sync had finished: check the store.
    const after = await late.api('/readyz', { key: null });
    expect(after).toMatchObject({ status: 200, body: { status: 'ready', sandbox: true } });
    const tickets = await late.api(`/tenants/${late.alphaId}/tickets?limit=1`);
    expect(tickets.body.tickets).toHaveLength(1);
    expect(tickets.body.last_synced_at).not.toBeNull();
    const statuses = seen.map((s) => s.status);
    expect(statuses.slice(statuses.indexOf(200) < 0 ? statuses.length : statuses.indexOf(200))).not.toContain(503);
  } finally {
    await (late ?? await starting.catch(() => undefined))?.close();
  }
}, 120_000);
