import { startStandalone } from '../kit';
import { createConnectWiseSimulator } from './simulator';
import { loadConnectWiseFixtures } from './fixtures';
import type { CwRecord } from './store';

const INSTANCE = 'sandbox-alpha';
const { resources: fixtures } = loadConnectWiseFixtures(INSTANCE);
const fixtureTickets = fixtures.tickets as CwRecord[];

const sim = createConnectWiseSimulator();
let api: string;
let close: () => Promise<void>;

function basic(companyId: string, pub: string, priv: string): string {
  return `Basic ${Buffer.from(`${companyId}+${pub}:${priv}`).toString('base64')}`;
}
const GOOD = {
  authorization: basic('sandbox', 'sandbox-public', 'sandbox-private'),
  clientId: '00000000-0000-0000-0000-000000000000',
};

async function cw(path: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  const url = path.startsWith('http') ? path : `${api}${path}`;
  const res = await fetch(url, {
    method: init.method ?? 'GET',
    headers: { ...GOOD, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}), ...init.headers },
    body: init.body !== undefined ? JSON.stringify(init.body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, link: res.headers.get('link'), body: text ? JSON.parse(text) : undefined };
}
const q = (conditions: string, extra = '') => `/service/tickets?pageSize=1000&conditions=${encodeURIComponent(conditions)}${extra}`;
const ids = (rows: CwRecord[]) => rows.map((r) => r.id);

beforeAll(async () => {
  ({ url: api, close } = await startStandalone(sim));
  api += '/v4_6_release/apis/3.0';
});
afterAll(() => close());
beforeEach(() => {
  sim.reset();
  sim.seed(INSTANCE, fixtures);
});

describe('authentication', () => {
  it('refuses missing or wrong credentials with a 401 in ConnectWise shape', async () => {
    const cases: Record<string, string>[] = [
      { authorization: '' },
      { authorization: basic('sandbox', 'sandbox-public', 'wrong') },
      { authorization: basic('othercompany', 'sandbox-public', 'sandbox-private') },
      { clientId: '' },
      { clientId: '11111111-2222-3333-4444-555555555555' },
    ];
    for (const headers of cases) {
      const res = await cw('/service/tickets', { headers });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ code: 'Unauthorized', message: expect.any(String) });
    }
  });

  it('accepts the sandbox company and the instance name as companyId', async () => {
    expect((await cw('/service/boards')).status).toBe(200);
    const byInstance = await cw('/service/boards', { headers: { authorization: basic('sandbox-alpha', 'sandbox-public', 'sandbox-private') } });
    expect(byInstance.status).toBe(200);
    expect(ids(byInstance.body)).toEqual(ids(fixtures.boards as CwRecord[]));
  });
});

describe('lists', () => {
  it('pages through every ticket once, in id order, following the Link header', async () => {
    const seen: number[] = [];
    let next: string | null = `${api}/service/tickets?pageSize=7`;
    let pages = 0;
    let firstLink: string | null = null;
    while (next && pages < 20) {
      const res = await cw(next);
      expect(res.status).toBe(200);
      expect(res.body.length).toBeLessThanOrEqual(7);
      firstLink ??= res.link;
      seen.push(...ids(res.body));
      next = /<([^>]+)>;\s*rel="next"/.exec(res.link ?? '')?.[1] ?? null;
      pages++;
    }
    expect(pages).toBe(Math.ceil(fixtureTickets.length / 7));
    expect(seen).toEqual(ids(fixtureTickets).sort((a, b) => a - b));
    expect(firstLink).toMatch(/rel="next"/);
    expect(firstLink).toMatch(new RegExp(`page=${pages}>; rel="last"`));
    expect((await cw('/service/tickets/count')).body).toEqual({ count: fixtureTickets.length });
  });

  it('defaults to 25 a page and clamps pageSize to 1000', async () => {
    expect((await cw('/service/tickets')).body).toHaveLength(25);
    sim.grow(INSTANCE, 'tickets', 1500);
    const big = await cw('/service/tickets?pageSize=5000');
    expect(big.body).toHaveLength(1000);
    expect(big.link).toMatch(/pageSize=1000&page=2>; rel="next"/);
    const second = await cw('/service/tickets?pageSize=1000&page=2');
    expect(second.body).toHaveLength(fixtureTickets.length + 1500 - 1000);
    expect(new Set([...ids(big.body), ...ids(second.body)]).size).toBe(fixtureTickets.length + 1500);
  });

  it('filters with conditions', async () => {
    const board2 = await cw(q('board/id = 2'));
    expect(ids(board2.body)).toEqual(ids(fixtureTickets.filter((t) => t.board.id === 2)));
    expect(board2.body.length).toBeGreaterThan(0);

    const cut = [...fixtureTickets].map((t) => t._info.lastUpdated).sort()[30];
    expect(ids((await cw(q(`lastUpdated > [${cut}]`))).body)).toEqual(ids(fixtureTickets.filter((t) => t._info.lastUpdated > cut)));
    expect(ids((await cw(q(`lastUpdated >= [${cut}]`))).body)).toEqual(ids(fixtureTickets.filter((t) => t._info.lastUpdated >= cut)));

    const [a, b] = fixtureTickets;
    expect(ids((await cw(q(`id in (${a.id}, ${b.id}, 99999)`))).body)).toEqual([a.id, b.id]);
    expect(ids((await cw(q(`id = ${b.id}`))).body)).toEqual([b.id]);

    const marked = fixtureTickets.find((t) => t.externalXRef)!;
    expect(ids((await cw(q(`externalXRef = "${marked.externalXRef}"`))).body))
      .toEqual(ids(fixtureTickets.filter((t) => t.externalXRef === marked.externalXRef)));

    const word = marked.summary.split(' ')[0].toUpperCase();
    const combined = await cw(q(`summary contains "${word}" and closedFlag = false and board/id = ${marked.board.id}`));
    const expected = fixtureTickets.filter((t) => t.summary.toUpperCase().includes(word) && !t.closedFlag && t.board.id === marked.board.id);
    expect(ids(combined.body)).toEqual(ids(expected));
    expect((await cw(`/service/tickets/count?conditions=${encodeURIComponent('board/id = 2')}`)).body).toEqual({ count: board2.body.length });

    const bad = await cw(q('summary contains'));
    expect(bad.status).toBe(400);
  });

  it('orders by orderBy', async () => {
    const res = await cw('/service/tickets?pageSize=1000&orderBy=' + encodeURIComponent('_info/lastUpdated desc'));
    const expected = [...fixtureTickets].sort((x, y) => (x._info.lastUpdated < y._info.lastUpdated ? 1 : -1));
    expect(ids(res.body)).toEqual(ids(expected));
  });

  it('serves child lists and 404s unknown parents', async () => {
    const board = (fixtures.boards as CwRecord[])[0];
    const statuses = await cw(`/service/boards/${board.id}/statuses`);
    expect(ids(statuses.body)).toEqual(ids((fixtures.statuses as CwRecord[]).filter((s) => s.board.id === board.id)));
    const agreement = (fixtures.agreements as CwRecord[])[0];
    const additions = await cw(`/finance/agreements/${agreement.id}/additions`);
    expect(ids(additions.body)).toEqual(ids((fixtures.additions as CwRecord[]).filter((x) => x.agreementId === agreement.id)));
    const missing = await cw('/finance/agreements/999999/additions');
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('NotFound');
  });
});

describe('ticket writes', () => {
  const openHelpDesk = () => fixtureTickets.find((t) => t.board.id === 1 && !t.closedFlag)!;
  const statusesOf = (boardId: number) => (fixtures.statuses as CwRecord[]).filter((s) => s.board.id === boardId);

  it('applies a JSON Patch: closing status sets closedFlag and closedDate, bumps lastUpdated', async () => {
    const t = openHelpDesk();
    const closed = statusesOf(1).find((s) => s.closedStatus)!;
    const res = await cw(`/service/tickets/${t.id}`, {
      method: 'PATCH',
      body: [{ op: 'replace', path: 'status/id', value: closed.id }, { op: 'replace', path: '/summary', value: 'Patched summary' }],
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: t.id, summary: 'Patched summary', status: { id: closed.id, name: closed.name }, closedFlag: true });
    expect(res.body.closedDate).toEqual(expect.any(String));
    expect(res.body._info.lastUpdated > t._info.lastUpdated).toBe(true);
    expect((await cw(`/service/tickets/${t.id}`)).body).toEqual(res.body);

    const reopened = await cw(`/service/tickets/${t.id}`, { method: 'PATCH', body: [{ op: 'replace', path: 'closedFlag', value: false }] });
    expect(reopened.body.closedFlag).toBe(false);
    expect(reopened.body.closedDate).toBeUndefined();
    expect(statusesOf(1).find((s) => s.id === reopened.body.status.id)?.closedStatus).toBe(false);
  });

  it('rejects a patch to a status of another board, and a too long summary, changing nothing', async () => {
    const t = openHelpDesk();
    const other = statusesOf(2)[0];
    const res = await cw(`/service/tickets/${t.id}`, {
      method: 'PATCH',
      body: [{ op: 'replace', path: 'status/id', value: other.id }, { op: 'replace', path: 'summary', value: 'x'.repeat(101) }],
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('InvalidObject');
    expect(res.body.errors.map((e: CwRecord) => e.field).sort()).toEqual(['status', 'summary']);
    expect(sim.get(INSTANCE, 'tickets', t.id)).toEqual(t);
  });

  it('creates a ticket with defaults and findable by externalXRef; validates required fields', async () => {
    const bad = await cw('/service/tickets', { method: 'POST', body: { company: { id: 424242 } } });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'InvalidObject', errors: expect.arrayContaining([
      expect.objectContaining({ code: 'Required', field: 'summary', resource: 'ticket' }),
      expect.objectContaining({ code: 'InvalidField', field: 'company', resource: 'ticket' }),
    ]) });

    const company = (fixtures.companies as CwRecord[])[3];
    const created = await cw('/service/tickets', {
      method: 'POST',
      body: { summary: 'Patch Tuesday failures on 3 devices', company: { id: company.id }, externalXRef: 'isv:finding-123', initialDescription: 'Found by scanner' },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      summary: 'Patch Tuesday failures on 3 devices', recordType: 'ServiceTicket', closedFlag: false,
      company: { id: company.id, identifier: company.identifier, name: company.name },
      board: { id: 1 }, status: { name: 'New' }, externalXRef: 'isv:finding-123',
    });
    expect(created.body.id).toBeGreaterThan(Math.max(...ids(fixtureTickets)));
    expect(created.body._info).toMatchObject({ lastUpdated: expect.any(String), dateEntered: expect.any(String) });
    expect(created.body.initialDescription).toBeUndefined();

    const found = await cw(q('externalXRef = "isv:finding-123"'));
    expect(ids(found.body)).toEqual([created.body.id]);
    const notes = await cw(`/service/tickets/${created.body.id}/notes`);
    expect(notes.body).toEqual([expect.objectContaining({ text: 'Found by scanner', detailDescriptionFlag: true, ticketId: created.body.id })]);
  });

  it('adds notes (text required) and bumps the ticket', async () => {
    const t = openHelpDesk();
    expect((await cw(`/service/tickets/${t.id}/notes`, { method: 'POST', body: { internalAnalysisFlag: true } })).status).toBe(400);
    const res = await cw(`/service/tickets/${t.id}/notes`, { method: 'POST', body: { text: 'Rebooted the NAS', internalAnalysisFlag: true } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ ticketId: t.id, text: 'Rebooted the NAS', internalAnalysisFlag: true, detailDescriptionFlag: false });
    const list = await cw(`/service/tickets/${t.id}/notes?pageSize=100`);
    expect(list.body.at(-1)).toEqual(res.body);
    expect(sim.get(INSTANCE, 'tickets', t.id)!._info.lastUpdated > t._info.lastUpdated).toBe(true);
  });

  it('records time only for an existing, active member', async () => {
    const t = openHelpDesk();
    const members = fixtures.members as CwRecord[];
    const inactive = members.find((m) => m.inactiveFlag)!;
    const active = members.find((m) => !m.inactiveFlag)!;
    const entry = { chargeToType: 'ServiceTicket', chargeToId: t.id, timeStart: '2026-11-21T09:00:00Z', actualHours: 1.25, billableOption: 'Billable' };
    const refused = await cw('/time/entries', { method: 'POST', body: { ...entry, member: { identifier: inactive.identifier } } });
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual([expect.objectContaining({ field: 'member', resource: 'timeEntry' })]);
    expect((await cw('/time/entries', { method: 'POST', body: { ...entry, member: { identifier: 'nobody' } } })).status).toBe(400);
    expect((await cw('/time/entries', { method: 'POST', body: { ...entry, timeStart: undefined, member: { identifier: active.identifier } } })).status).toBe(400);

    const ok = await cw('/time/entries', { method: 'POST', body: { ...entry, member: { identifier: active.identifier } } });
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ chargeToId: t.id, actualHours: 1.25, timeEnd: '2026-11-21T10:15:00Z', member: { identifier: active.identifier } });
    expect(sim.get(INSTANCE, 'tickets', t.id)!.actualHours).toBeCloseTo((t.actualHours ?? 0) + 1.25);
  });
});

describe('programmatic API', () => {
  it('update() is an MSP edit: merged, lastUpdated bumped, visible to a lastUpdated filter', async () => {
    const maxUpdated = fixtureTickets.map((t) => t._info.lastUpdated).sort().at(-1)!;
    const t = fixtureTickets[5];
    const updated = sim.update(INSTANCE, 'tickets', t.id, { summary: 'Edited in the UI' });
    expect(updated.summary).toBe('Edited in the UI');
    expect(updated.board).toEqual(t.board);
    const res = await cw(q(`lastUpdated > [${maxUpdated}]`));
    expect(ids(res.body)).toEqual([t.id]);
  });

  it('addNote() and create() add records the API serves', async () => {
    const t = fixtureTickets[0];
    const note = sim.addNote(INSTANCE, t.id, 'Called the customer', { resolutionFlag: true });
    expect((await cw(`/service/tickets/${t.id}/notes/${note.id}`)).body).toEqual(note);
    const company = sim.create(INSTANCE, 'companies', { identifier: 'NewCo', name: 'New Co' });
    expect((await cw(`/company/companies/${company.id}`)).body).toEqual(company);
  });
});
