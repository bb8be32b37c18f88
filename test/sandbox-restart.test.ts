/**
 * The sandbox across restarts (docs/architecture.md, Sandbox): the store outlives the in-memory simulators, so a
 * restart resets the sandbox tenants and keeps vendor ids above those issued before. Start, commit a
 * ticket, close; start again on the same DATA_DIR (same database), create another ticket, sync: no
 * phantom, no reused id, and `ticket.created` for the new one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ConnectWiseSimulator } from '../src/simulators/connectwise/simulator';
import type { DatabaseOptions } from '../src/db/database';
import { freePort, runtime, uniqueSuffix } from './support/runtime';
import { startTestService, type TestService } from './support/service';

const dataDir = mkdtempSync(path.join(tmpdir(), 'sandbox-restart-'));
// The generated encryption key lives outside DATA_DIR (src/config/key-store.ts): here, beside it, and removed with it.
const configHome = mkdtempSync(path.join(tmpdir(), 'sandbox-restart-config-'));
const schema = `t_restart_${uniqueSuffix()}`;
const database = (last: boolean): DatabaseOptions =>
  runtime.databaseUrl ? { databaseUrl: runtime.databaseUrl, schema, dropSchemaOnClose: last } : { dataDir };
const start = (last: boolean, port = 0) =>
  startTestService({ ephemeral: false, dataDir, port }, { database: database(last), env: { XDG_CONFIG_HOME: configHome } });

let svc: TestService | undefined;
afterAll(async () => {
  await svc?.close();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(configHome, { recursive: true, force: true });
});

function companyName(s: TestService): string {
  const counts = new Map<string, number>();
  for (const c of (s.services.simulators!.connectwise as ConnectWiseSimulator).list('sandbox-alpha', 'companies')) {
    counts.set(c.name, (counts.get(c.name) ?? 0) + 1);
  }
  return [...counts.entries()].find(([, n]) => n === 1)![0];
}
async function tickets(s: TestService): Promise<{ id: string; source_id: string }[]> {
  const res = await s.api(`/tenants/${s.alphaId}/tickets?limit=500`);
  expect(res.status).toBe(200);
  expect(res.body.next_cursor ?? null).toBeNull();
  return res.body.tickets;
}

it('a restart leaves no phantom, reuses no id, and a new ticket is ticket.created', async () => {
  svc = await start(false);
  const committed = await svc.api(`/tenants/${svc.alphaId}/tickets`, {
    method: 'POST', json: { company_name: companyName(svc), summary: 'Before the restart', dry_run: false, idempotency_key: `restart-${uniqueSuffix()}` },
  });
  expect(committed.status).toBe(201);
  const firstRef: string = committed.body.ticket_ref;
  expect((await svc.api(`/tenants/${svc.alphaId}/sync`, { method: 'POST', json: {} })).body.ok).toBe(true);
  const first = (await tickets(svc)).find((t) => t.source_id === firstRef)!;
  expect(first).toBeDefined();
  const alphaId = svc.alphaId;
  const key = svc.key;
  await svc.close();
  svc = undefined;

  // While the restart resets and re-syncs the sandbox: not ready, and no list answers empty as if synced.
  const port = await freePort();
  let started = false;
  const starting = start(true, port).then((s) => { started = true; return s; });
  const ready: number[] = [];
  const emptyButSynced: unknown[] = [];
  let listsRead = 0;
  for (let i = 0; i < 3000 && !started; i++) {
    const r = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null);
    if (r) ready.push(r.status);
    const list = await fetch(`http://127.0.0.1:${port}/tenants/${alphaId}/tickets?limit=1`, { headers: { 'x-api-key': key } }).catch(() => null);
    if (list?.status === 200) {
      listsRead++;
      const body = await list.json() as { tickets: unknown[]; last_synced_at: string | null };
      if (body.tickets.length === 0 && body.last_synced_at !== null) emptyButSynced.push(body);
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  svc = await starting;
  expect(svc.alphaId).toBe(alphaId);
  expect(ready.length).toBeGreaterThan(0);
  // 503 until the reset and its sync finished (a 200 may come while the start hands over), never 503 again.
  expect(ready[0]).toBe(503);
  if (ready.includes(200)) expect(ready.slice(ready.indexOf(200))).not.toContain(503);
  expect(listsRead).toBeGreaterThan(0);
  expect(emptyButSynced).toEqual([]);
  expect((await svc.api('/readyz', { key: null })).status).toBe(200);
  // The simulators started from fixtures: the committed ticket is gone there, so it is gone here.
  expect((await tickets(svc)).map((t) => t.source_id)).not.toContain(firstRef);
  const reset = await svc.api(`/tenants/${svc.alphaId}/connections/events?kind=sandbox_reset`);
  expect(reset.body.events).toHaveLength(1);

  const cw = svc.services.simulators!.connectwise as ConnectWiseSimulator;
  const created = cw.create('sandbox-alpha', 'tickets', {
    summary: 'After the restart', company: { id: cw.list('sandbox-alpha', 'companies').find((c) => c.name === companyName(svc!))!.id },
  });
  expect(String(created.id)).not.toBe(firstRef);
  expect(created.id).toBeGreaterThan(Number(firstRef));
  expect((await svc.api(`/tenants/${svc.alphaId}/sync`, { method: 'POST', json: {} })).body.ok).toBe(true);

  const after = await tickets(svc);
  const second = after.find((t) => t.source_id === String(created.id))!;
  expect(second).toBeDefined();
  expect(second.id).not.toBe(first.id);
  expect(after.filter((t) => t.source_id === firstRef)).toEqual([]);
  const events = (await svc.api(`/tenants/${svc.alphaId}/connections/events?kind=ticket`)).body.events;
  expect(events.filter((e: any) => e.vendor_id === String(created.id)).map((e: any) => e.kind)).toEqual(['ticket.created']);
  expect(events.filter((e: any) => e.kind === 'ticket.updated')).toEqual([]);
}, 180_000);
