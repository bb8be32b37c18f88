/**
 * The sandbox across restarts (issue 11 part 6): the store outlives the in-memory simulators, so a
 * restart resets the sandbox tenants and keeps vendor ids above those issued before. Start, commit a
 * ticket, close; start again on the same DATA_DIR (same database), create another ticket, sync: no
 * phantom, no reused id, and `ticket.created` for the new one.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ConnectWiseSimulator } from '../src/simulators/connectwise/simulator';
import type { DatabaseOptions } from '../src/db/database';
import { runtime, uniqueSuffix } from './support/runtime';
import { startTestService, type TestService } from './support/service';

const dataDir = mkdtempSync(path.join(tmpdir(), 'sandbox-restart-'));
const schema = `t_restart_${uniqueSuffix()}`;
const database = (last: boolean): DatabaseOptions =>
  runtime.databaseUrl ? { databaseUrl: runtime.databaseUrl, schema, dropSchemaOnClose: last } : { dataDir };
const start = (last: boolean) => startTestService({ ephemeral: false, dataDir }, { database: database(last) });

let svc: TestService | undefined;
afterAll(async () => {
  await svc?.close();
  rmSync(dataDir, { recursive: true, force: true });
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
  await svc.close();
  svc = undefined;

  svc = await start(true);
  expect(svc.alphaId).toBe(alphaId);
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
