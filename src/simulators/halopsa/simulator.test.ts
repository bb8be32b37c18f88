import { startStandalone } from '../kit';
import { loadHaloFixtures } from './fixtures';
import { createHaloPsaSimulator, type HaloPsaSimulator } from './simulator';

const INSTANCE = 'sandbox-beta';
const fixtures = loadHaloFixtures(INSTANCE);

let sim: HaloPsaSimulator;
let server: { url: string; close: () => Promise<void> };
let token: string;

async function requestToken(form: Record<string, string>): Promise<Response> {
  return fetch(`${server.url}/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
}

const SANDBOX_FORM = { grant_type: 'client_credentials', client_id: 'sandbox', client_secret: 'sandbox-secret', scope: 'all' };

async function api(path: string, init: RequestInit & { json?: unknown } = {}): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  let body: string | undefined;
  if (init.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(init.json);
  }
  const res = await fetch(`${server.url}/api/${path}`, { method: init.method ?? 'GET', headers, body });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

beforeAll(async () => {
  sim = createHaloPsaSimulator();
  server = await startStandalone(sim);
});
afterAll(async () => {
  await server.close();
});
beforeEach(async () => {
  sim.reset();
  sim.seed(INSTANCE, fixtures.records);
  sim.faults.clear();
  const res = await requestToken(SANDBOX_FORM);
  token = ((await res.json()) as { access_token: string }).access_token;
});

describe('authentication', () => {
  test('client credentials give a bearer token that reads the sandbox-beta dataset', async () => {
    const res = await requestToken(SANDBOX_FORM);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
    token = body.access_token as string;
    const tickets = await api('Tickets');
    expect(tickets.body.record_count).toBe(fixtures.records.tickets.length);
  });

  test('a wrong secret or unknown client is refused with invalid_client', async () => {
    const wrong = await requestToken({ ...SANDBOX_FORM, client_secret: 'nope' });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toEqual({ error: 'invalid_client' });
    const unknown = await requestToken({ ...SANDBOX_FORM, client_id: 'someone' });
    expect(unknown.status).toBe(401);
    const grant = await requestToken({ ...SANDBOX_FORM, grant_type: 'password' });
    expect(grant.status).toBe(400);
  });

  test('the API refuses requests without a valid bearer token', async () => {
    const none = await fetch(`${server.url}/api/Tickets`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    token = 'made-up';
    expect((await api('Client')).status).toBe(401);
  });

  test('a revoked token stops working', async () => {
    sim.revokeTokens();
    expect((await api('Tickets')).status).toBe(401);
  });

  test('authinfo tells where the token endpoint is', async () => {
    const res = await fetch(`${server.url}/api/authinfo`);
    const { auth_url: authUrl } = (await res.json()) as { auth_url: string };
    expect(authUrl).toBe(`${server.url}/auth`);
    const tokenRes = await fetch(`${authUrl}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(SANDBOX_FORM).toString(),
    });
    expect(tokenRes.status).toBe(200);
  });
});

describe('lists', () => {
  test('ticket pages are complete and disjoint', async () => {
    const seen: number[] = [];
    for (let page = 1; page <= 20; page++) {
      const res = await api(`Tickets?pageinate=true&page_size=7&page_no=${page}`);
      expect(res.status).toBe(200);
      expect(res.body.record_count).toBe(60);
      if (res.body.tickets.length === 0) break;
      seen.push(...res.body.tickets.map((t: { id: number }) => t.id));
    }
    expect(seen).toHaveLength(60);
    expect(new Set(seen).size).toBe(60);
    expect(seen.sort()).toEqual(fixtures.records.tickets.map((t) => (t as { id: number }).id).sort());
  });

  test('page_size is capped at Halo\'s maximum of 100', async () => {
    sim.grow(INSTANCE, 'tickets', 150);
    const res = await api('Tickets?pageinate=true&page_size=500&page_no=1');
    expect(res.body.page_size).toBe(100);
    expect(res.body.tickets).toHaveLength(100);
    expect(res.body.record_count).toBe(210);
  });

  test('lastupdatefromdate returns only tickets changed since then', async () => {
    const before = new Date();
    const changed = sim.update(INSTANCE, 'tickets', 1005, { status_id: 2 });
    expect(new Date(`${changed.last_update}Z`).getTime()).toBeGreaterThanOrEqual(before.getTime());
    const since = before.toISOString().slice(0, 23);
    const res = await api(`Tickets?pageinate=true&page_size=100&page_no=1&lastupdatefromdate=${since}`);
    expect(res.body.record_count).toBe(1);
    expect(res.body.tickets.map((t: { id: number }) => t.id)).toEqual([1005]);
    const justBefore = new Date(before.getTime() - 1).toISOString().slice(0, 23);
    const older = await api(`Tickets?lastupdatetodate=${justBefore}`);
    expect(older.body.record_count).toBe(59);
  });

  test('clients and contracts leave inactive records out unless asked', async () => {
    const active = await api('Client?pageinate=true&page_size=100&page_no=1');
    expect(active.body.record_count).toBe(19);
    const all = await api('Client?pageinate=true&page_size=100&page_no=1&includeinactive=true');
    expect(all.body.record_count).toBe(20);
    const names = all.body.clients.map((c: { name: string }) => c.name);
    expect(names.filter((n: string) => n === 'Atlas Plumbing Supplies')).toHaveLength(2);
    expect((await api('ClientContract')).body.record_count).toBe(5);
    expect((await api('ClientContract?includeinactive=true')).body.record_count).toBe(6);
  });

  test('lookup lists are plain arrays', async () => {
    const statuses = await api('Status');
    expect(Array.isArray(statuses.body)).toBe(true);
    expect(statuses.body.length).toBeGreaterThanOrEqual(8);
    expect((await api('Priority')).body).toHaveLength(4);
    expect((await api('Team')).body.length).toBeGreaterThanOrEqual(3);
    const agents = await api('Agent');
    expect(agents.body.every((a: { isdisabled: boolean }) => !a.isdisabled)).toBe(true);
    expect((await api('Agent?includedisabled=true')).body).toHaveLength(12);
  });

  test('recurring invoices carry their lines only with includelines', async () => {
    const bare = await api('RecurringInvoice?pageinate=true&page_size=100&page_no=1');
    expect(bare.body.invoices[0].lines).toBeUndefined();
    const full = await api('RecurringInvoice?pageinate=true&page_size=100&page_no=1&includelines=true');
    const lines = full.body.invoices.flatMap((i: { lines: unknown[] }) => i.lines);
    expect(lines).toHaveLength(25);
  });

  test('projects are listed under the tickets key; single records by id', async () => {
    const projects = await api('Projects?pageinate=true&page_size=100&page_no=1');
    expect(projects.body.record_count).toBe(4);
    expect(projects.body.tickets.filter((p: { locked: boolean }) => p.locked)).toHaveLength(1);
    const one = await api('Tickets/1001');
    expect(one.body.id).toBe(1001);
    expect((await api('Tickets/99999')).status).toBe(404);
  });

  test('50,000 grown tickets page correctly', async () => {
    sim.grow(INSTANCE, 'tickets', 50_000);
    const last = await api('Tickets?pageinate=true&page_size=100&page_no=501');
    expect(last.body.record_count).toBe(50_060);
    expect(last.body.tickets).toHaveLength(60);
    const middle = await api('Tickets?pageinate=true&page_size=100&page_no=250');
    const ids = middle.body.tickets.map((t: { id: number }) => t.id);
    expect(new Set(ids).size).toBe(100);
    expect(ids).toEqual([...ids].sort((a: number, b: number) => a - b));
  });
});

describe('writes', () => {
  test('POST /api/Tickets creates a ticket: summary required, client must exist', async () => {
    const noSummary = await api('Tickets', { method: 'POST', json: [{ client_id: 12 }] });
    expect(noSummary.status).toBe(400);
    const noClient = await api('Tickets', { method: 'POST', json: [{ summary: 'Printer jam', client_id: 4242 }] });
    expect(noClient.status).toBe(400);
    const created = await api('Tickets', {
      method: 'POST', json: [{ summary: 'Printer jam in reception', details: 'Tray 2', client_id: 12, priority_id: 2 }],
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ summary: 'Printer jam in reception', client_name: 'Harbourside Dental Group', status_id: 1 });
    expect(created.body.id).toBeGreaterThan(1060);
    expect((await api(`Tickets/${created.body.id}`)).body.details).toBe('Tray 2');
    expect((await api('Tickets')).body.record_count).toBe(61);
  });

  test('an element with id updates the ticket and bumps last_update', async () => {
    const before = sim.get(INSTANCE, 'tickets', 1001)!;
    const res = await api('Tickets', { method: 'POST', json: [{ id: 1001, status_id: 9 }] });
    expect(res.status).toBe(201);
    expect(res.body.status_id).toBe(9);
    expect(res.body.dateclosed).not.toBeNull();
    expect(res.body.last_update > before.last_update).toBe(true);
    const unknown = await api('Tickets', { method: 'POST', json: [{ id: 4242, summary: 'x' }] });
    expect(unknown.status).toBe(404);
    const notArray = await api('Tickets', { method: 'POST', json: { summary: 'x', client_id: 12 } });
    expect(notArray.status).toBe(400);
  });

  test('actions add notes to a ticket and can close it; the locked baseline project refuses them', async () => {
    const note = await api('Actions', { method: 'POST', json: [{ ticket_id: 1002, note: 'Rebooted the printer', outcome: 'Remote Session' }] });
    expect(note.status).toBe(201);
    const actions = await api('Actions?ticket_id=1002');
    expect(actions.body.actions.map((a: { note: string }) => a.note)).toContain('Rebooted the printer');
    const closing = await api('Actions', { method: 'POST', json: [{ ticket_id: 1002, note: 'Fixed', new_status: 9 }] });
    expect(closing.status).toBe(201);
    expect(sim.get(INSTANCE, 'tickets', 1002)!.status_id).toBe(9);

    const baseline = sim.list(INSTANCE, 'projects').find((p) => p.locked)!;
    const refused = await api('Actions', { method: 'POST', json: [{ ticket_id: baseline.id, note: 'scope change' }] });
    expect(refused.status).toBe(400);
    const open = sim.list(INSTANCE, 'projects').find((p) => !p.locked)!;
    expect((await api('Actions', { method: 'POST', json: [{ ticket_id: open.id, note: 'Phase 2 done' }] })).status).toBe(201);
  });

  test('the programmatic addAction bumps the ticket like a note typed in Halo', () => {
    const before = sim.get(INSTANCE, 'tickets', 1003)!;
    const action = sim.addAction(INSTANCE, 1003, 'Called the user back');
    expect(action).toMatchObject({ ticket_id: 1003, note: 'Called the user back' });
    const after = sim.get(INSTANCE, 'tickets', 1003)!;
    expect(after.last_update > before.last_update).toBe(true);
    expect(after.lastactiondate).toBe(action.datetime);
  });
});
