import { startStandalone } from '../kit';
import { AUTOTASK_DEMO_INSTANCE, loadAutotaskDemoFixtures } from './demo-fixtures';
import { createAutotaskSimulator, type AutotaskSimulator, type AutotaskSimulatorOptions } from './simulator';

const AUTH = { ApiIntegrationCode: 'SANDBOX', UserName: 'sandbox', Secret: 'sandbox-secret' };
const fixtures = loadAutotaskDemoFixtures();

interface Answer {
  status: number;
  headers: Headers;
  // JSON answers of many shapes; the assertions say what they expect.
  body: any;
}

async function startSim(opts: AutotaskSimulatorOptions = {}) {
  const sim = createAutotaskSimulator(opts);
  sim.seed(AUTOTASK_DEMO_INSTANCE, fixtures.resources);
  const server = await startStandalone(sim);
  const base = `${server.url}/atservicesrest/v1.0`;
  const call = async (method: string, pathOrUrl: string, body?: unknown, headers: Record<string, string> = AUTH): Promise<Answer> => {
    const url = pathOrUrl.startsWith('http') ? pathOrUrl : `${base}/${pathOrUrl}`;
    const res = await fetch(url, {
      method,
      headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
  };
  return { sim, server, base, call };
}

type Started = Awaited<ReturnType<typeof startSim>>;

describe('Autotask simulator', () => {
  let s: Started;
  let sim: AutotaskSimulator;
  beforeAll(async () => {
    s = await startSim();
    sim = s.sim;
  });
  afterAll(() => s.server.close());

  const ticketCount = () => sim.list(AUTOTASK_DEMO_INSTANCE, 'Tickets').length;
  const activeCompany = () => sim.list(AUTOTASK_DEMO_INSTANCE, 'Companies').find((c) => c.isActive === true && c.id !== 0)!;

  describe('authentication', () => {
    it('refuses missing or wrong credentials with 401 and an errors list', async () => {
      const none = await s.call('POST', 'Tickets/query', { filter: [{ op: 'exist', field: 'id' }] }, {});
      expect(none.status).toBe(401);
      expect(none.body.errors).toEqual([expect.any(String)]);
      const wrong = await s.call('GET', 'Tickets/7001', undefined, { ...AUTH, Secret: 'nope' });
      expect(wrong.status).toBe(401);
      const badCode = await s.call('GET', 'Tickets/7001', undefined, { ...AUTH, ApiIntegrationCode: 'OTHER' });
      expect(badCode.status).toBe(401);
    });

    it('answers ZoneInformation without credentials, pointing back at this host', async () => {
      const zone = await s.call('GET', 'ZoneInformation?user=sandbox', undefined, {});
      expect(zone.status).toBe(200);
      expect(zone.body).toEqual({ zoneName: expect.any(String), url: `${s.server.url}/atservicesrest/`, webUrl: `${s.server.url}/`, ci: expect.any(Number) });
      expect((await s.call('GET', 'ZoneInformation?user=someone-else', undefined, {})).status).toBe(500);
    });
  });

  describe('queries', () => {
    const ids = (a: Answer) => a.body.items.map((i: { id: number }) => i.id);

    it('filters with eq, in, case-insensitive text ops, or-groups and dates', async () => {
      const all = sim.list(AUTOTASK_DEMO_INSTANCE, 'Tickets');
      const complete = await s.call('POST', 'Tickets/query', { filter: [{ op: 'eq', field: 'status', value: 5 }] });
      expect(ids(complete)).toEqual(all.filter((t) => t.status === 5).map((t) => t.id));
      expect(complete.body.items.length).toBeGreaterThan(0);

      const someStatuses = await s.call('POST', 'Tickets/query', { filter: [{ op: 'in', field: 'Status', value: [1, 8] }] });
      expect(ids(someStatuses)).toEqual(all.filter((t) => t.status === 1 || t.status === 8).map((t) => t.id));

      const summit = await s.call('POST', 'Companies/query', { filter: [{ op: 'beginsWith', field: 'companyName', value: 'summit dental' }] });
      expect(summit.body.items.map((c: { companyName: string }) => c.companyName)).toEqual(['Summit Dental Group', 'Summit Dental Group']);

      const either = await s.call('POST', 'Tickets/query', {
        filter: [{ op: 'or', items: [{ op: 'eq', field: 'priority', value: 4 }, { op: 'contains', field: 'title', value: 'VPN' }] }],
      });
      expect(ids(either)).toEqual(all.filter((t) => t.priority === 4 || String(t.title).includes('VPN')).map((t) => t.id));

      const since = '2026-10-01T00:00:00Z';
      const recent = await s.call('POST', 'Tickets/query', { filter: [{ op: 'gte', field: 'lastActivityDate', value: since }] });
      expect(ids(recent)).toEqual(all.filter((t) => Date.parse(String(t.lastActivityDate)) >= Date.parse(since)).map((t) => t.id));
      expect(recent.body.items.length).toBeGreaterThan(0);
      expect(recent.body.items.length).toBeLessThan(all.length);

      // Text operators are SQL Server LIKEs: `[` opens a character class, `_` is any one character.
      const vpn = all.filter((t) => String(t.title).includes('VPN'));
      expect(ids(await s.call('POST', 'Tickets/query', { filter: [{ op: 'contains', field: 'title', value: '[V]PN' }] }))).toEqual(vpn.map((t) => t.id));
      expect(ids(await s.call('POST', 'Tickets/query', { filter: [{ op: 'contains', field: 'title', value: 'V_N' }] })).length).toBeGreaterThanOrEqual(vpn.length);
      expect(ids(await s.call('POST', 'Tickets/query', { filter: [{ op: 'contains', field: 'title', value: '[VPN]' }] })).length).toBeGreaterThan(vpn.length);

      const viaGet = await s.call('GET', `Tickets/query?search=${encodeURIComponent(JSON.stringify({ filter: [{ op: 'eq', field: 'status', value: 5 }] }))}`);
      expect(viaGet.body).toEqual(complete.body);
    });

    it('refuses a query on an unknown field or without conditions', async () => {
      const unknown = await s.call('POST', 'Tickets/query', { filter: [{ op: 'eq', field: 'colour', value: 'red' }] });
      expect(unknown.status).toBe(500);
      expect(unknown.body.errors[0]).toMatch(/colour/);
      expect((await s.call('POST', 'Tickets/query', { filter: [] })).status).toBe(500);
      expect((await s.call('POST', 'Tickets/query', { filter: [{ op: 'exist', field: 'id' }], MaxRecords: 501 })).status).toBe(500);
    });

    it('pages through nextPageUrl: every record once, in id order, and prevPageUrl goes back', async () => {
      const first = await s.call('POST', 'Tickets/query', { filter: [{ op: 'exist', field: 'id' }], MaxRecords: 7 });
      expect(first.body.pageDetails).toMatchObject({ count: 7, requestCount: 7, prevPageUrl: null });
      const seen: number[] = [...ids(first)];
      let page = first;
      let second: Answer | undefined;
      for (let n = 0; page.body.pageDetails.nextPageUrl && n < 50; n++) {
        expect(page.body.pageDetails.nextPageUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/.*\/Tickets\/query\/next\?paging=/);
        page = await s.call('GET', page.body.pageDetails.nextPageUrl);
        second ??= page;
        seen.push(...ids(page));
      }
      expect(page.body.pageDetails.nextPageUrl).toBeNull();
      expect(seen).toEqual(sim.list(AUTOTASK_DEMO_INSTANCE, 'Tickets').map((t) => t.id));
      expect(new Set(seen).size).toBe(seen.length);
      const back = await s.call('GET', second!.body.pageDetails.prevPageUrl);
      expect(ids(back)).toEqual(ids(first));
    });

    it('GET <Entity>/{id} answers {item}, and 404 for an unknown id', async () => {
      const one = await s.call('GET', 'Tickets/7003');
      expect(one.body.item).toEqual(sim.get(AUTOTASK_DEMO_INSTANCE, 'Tickets', 7003));
      const unknown = await s.call('GET', 'Tickets/999999');
      expect(unknown.status).toBe(404);
      expect(unknown.body).toEqual({ errors: [expect.any(String)] });
    });

    it('serves the status, priority and queue picklists from entityInformation/fields', async () => {
      const { body } = await s.call('GET', 'Tickets/entityInformation/fields');
      const byName = (n: string) => body.fields.find((f: { name: string }) => f.name === n);
      expect(byName('status').picklistValues).toHaveLength(8);
      expect(byName('priority').picklistValues).toHaveLength(4);
      expect(byName('queueID').picklistValues).toHaveLength(3);
      expect(byName('title')).toMatchObject({ isRequired: true, length: 255, dataType: 'string' });
      expect(byName('status').picklistValues[0]).toEqual({
        value: '1', label: 'New', isDefaultValue: true, sortOrder: 1, parentValue: '', isActive: true, isSystem: true,
      });
    });
  });

  describe('ticket writes', () => {
    const validTicket = () => ({ companyID: activeCompany().id, title: 'Server room temperature alarm', status: 1, priority: 2, queueID: 29683481 });

    it('refuses a ticket without a title with 500 {errors} and creates nothing', async () => {
      const before = ticketCount();
      const { title: _t, ...noTitle } = validTicket();
      const res = await s.call('POST', 'Tickets', noTitle);
      expect(res.status).toBe(500);
      expect(res.body.errors.join(' ')).toMatch(/title/);
      expect(ticketCount()).toBe(before);
    });

    it('refuses unknown picklist values, unknown companies and over-long titles', async () => {
      const before = ticketCount();
      for (const bad of [{ status: 99 }, { priority: 0 }, { queueID: 12345 }, { companyID: 424242 }, { title: 'x'.repeat(256) }]) {
        const res = await s.call('POST', 'Tickets', { ...validTicket(), ...bad });
        expect(res.status).toBe(500);
        expect(res.body.errors).toHaveLength(1);
      }
      const resourceOnly = await s.call('POST', 'Tickets', { ...validTicket(), assignedResourceID: 29682886 });
      expect(resourceOnly.body.errors[0]).toMatch(/assignedResourceRoleID/);
      expect(ticketCount()).toBe(before);
    });

    it('creates a ticket, finds it by its externalID marker, and updates it with PATCH', async () => {
      const marker = 'msp-int:3f2a9c';
      const created = await s.call('POST', 'Tickets', { ...validTicket(), externalID: marker, description: 'Raised by the integration.' });
      expect(created.status).toBe(200);
      const id = created.body.itemId;
      expect(id).toEqual(expect.any(Number));
      const found = await s.call('POST', 'Tickets/query', { filter: [{ op: 'eq', field: 'externalID', value: marker }] });
      expect(found.body.items.map((t: { id: number }) => t.id)).toEqual([id]);
      const ticket = found.body.items[0];
      expect(ticket).toMatchObject({ title: 'Server room temperature alarm', status: 1, ticketType: 1, completedDate: null, ticketNumber: expect.stringMatching(/^T\d{8}\.\d{4}$/) });

      const closed = await s.call('PATCH', 'Tickets', { id, status: 5 });
      expect(closed.body).toEqual({ itemId: id });
      const after = sim.get(AUTOTASK_DEMO_INSTANCE, 'Tickets', id)!;
      expect(after.status).toBe(5);
      expect(after.completedDate).not.toBeNull();
      expect(Date.parse(String(after.lastActivityDate))).toBeGreaterThan(Date.parse(ticket.lastActivityDate));

      expect((await s.call('PATCH', 'Tickets', { id, priority: 42 })).status).toBe(500);
      expect((await s.call('PATCH', 'Tickets', { id: 999999, status: 1 })).status).toBe(500);
      expect(sim.get(AUTOTASK_DEMO_INSTANCE, 'Tickets', id)!.priority).toBe(2);
    });
  });

  describe('notes and time', () => {
    it('adds a ticket note through Tickets/{id}/Notes and bumps the ticket; refuses one without a title', async () => {
      const ticket = sim.get(AUTOTASK_DEMO_INSTANCE, 'Tickets', 7010)!;
      const notesBefore = sim.list(AUTOTASK_DEMO_INSTANCE, 'TicketNotes').length;
      const refused = await s.call('POST', 'Tickets/7010/Notes', { description: 'Checked the UPS.', noteType: 1, publish: 1 });
      expect(refused.status).toBe(500);
      expect(refused.body.errors.join(' ')).toMatch(/title/);
      expect(sim.list(AUTOTASK_DEMO_INSTANCE, 'TicketNotes')).toHaveLength(notesBefore);

      const added = await s.call('POST', 'Tickets/7010/Notes', { title: 'Update', description: 'Checked the UPS.', noteType: 1, publish: 2 });
      expect(added.status).toBe(200);
      const note = sim.get(AUTOTASK_DEMO_INSTANCE, 'TicketNotes', added.body.itemId)!;
      expect(note).toMatchObject({ ticketID: 7010, publish: 2, description: 'Checked the UPS.' });
      expect(Date.parse(String(sim.get(AUTOTASK_DEMO_INSTANCE, 'Tickets', 7010)!.lastActivityDate))).toBeGreaterThan(Date.parse(String(ticket.lastActivityDate)));
      const listed = await s.call('GET', 'Tickets/7010/Notes');
      expect(listed.body.items.map((n: { id: number }) => n.id)).toContain(added.body.itemId);

      // Children are created through their parent only: the swagger has no root POST TicketNotes,
      // ProjectNotes or Tasks (nor POST/PATCH ContractServices), so those answer 404 and create nothing.
      const count = sim.list(AUTOTASK_DEMO_INSTANCE, 'TicketNotes').length;
      for (const entity of ['TicketNotes', 'ProjectNotes', 'Tasks', 'ContractServices']) {
        expect((await s.call('POST', entity, { ticketID: 7010, title: 'Update', description: 'x', noteType: 1, publish: 2 })).status).toBe(404);
      }
      expect(sim.list(AUTOTASK_DEMO_INSTANCE, 'TicketNotes')).toHaveLength(count);
    });

    it('refuses 25 hours, an inactive resource and a missing role; accepts a valid time entry', async () => {
      const resources = sim.list(AUTOTASK_DEMO_INSTANCE, 'Resources');
      const active = resources.find((r) => r.isActive === true)!;
      const inactive = resources.find((r) => r.isActive === false)!;
      // Ticket time is entered in the ticket's assigned role.
      const ticketRole = sim.get(AUTOTASK_DEMO_INSTANCE, 'Tickets', 7012)!.assignedResourceRoleID ?? active.defaultServiceDeskRoleID;
      const entry = { resourceID: active.id, roleID: ticketRole, ticketID: 7012, dateWorked: '2026-11-20', hoursWorked: 1.5, summaryNotes: 'Replaced the switch.' };
      const before = sim.list(AUTOTASK_DEMO_INSTANCE, 'TimeEntries').length;

      const tooLong = await s.call('POST', 'TimeEntries', { ...entry, hoursWorked: 25 });
      expect(tooLong.status).toBe(500);
      expect(tooLong.body.errors.join(' ')).toMatch(/hoursWorked/);
      expect((await s.call('POST', 'TimeEntries', { ...entry, hoursWorked: 0 })).status).toBe(500);
      expect((await s.call('POST', 'TimeEntries', { ...entry, resourceID: inactive.id })).body.errors.join(' ')).toMatch(/inactive/);
      expect((await s.call('POST', 'TimeEntries', { ...entry, roleID: undefined })).body.errors.join(' ')).toMatch(/roleID/);
      expect((await s.call('POST', 'TimeEntries', { ...entry, ticketID: undefined })).body.errors.join(' ')).toMatch(/ticketID/);
      expect(sim.list(AUTOTASK_DEMO_INSTANCE, 'TimeEntries')).toHaveLength(before);

      const ok = await s.call('POST', 'TimeEntries', { ...entry, isNonBillable: true });
      expect(ok.status).toBe(200);
      expect(sim.get(AUTOTASK_DEMO_INSTANCE, 'TimeEntries', ok.body.itemId)).toMatchObject({
        hoursWorked: 1.5, hoursToBill: 0, isNonBillable: true, dateWorked: '2026-11-20T00:00:00.000Z', ticketID: 7012,
      });
    });
  });

  describe('programmatic changes', () => {
    it('update bumps lastActivityDate so the change is visible to a lastActivityDate filter', async () => {
      // The test before this one logged time on ticket 7012, which bumps its lastActivityDate: on a fast
      // machine that stamp fell in the very millisecond of `since`, and the gte filter rightly listed it.
      await new Promise((r) => setTimeout(r, 2));
      const since = new Date().toISOString();
      sim.update(AUTOTASK_DEMO_INSTANCE, 'Tickets', 7020, { title: 'Changed in the Autotask UI' });
      const changed = await s.call('POST', 'Tickets/query', { filter: [{ op: 'gte', field: 'lastActivityDate', value: since }] });
      expect(changed.body.items.map((t: { id: number }) => t.id)).toEqual([7020]);
    });

    it('grows 50,000 tickets that page completely', async () => {
      const big = await startSim();
      try {
        big.sim.grow(AUTOTASK_DEMO_INSTANCE, 'Tickets', 50_000);
        const total = 50_060;
        const count = await big.call('POST', 'Tickets/query/count', { filter: [{ op: 'exist', field: 'id' }] });
        expect(count.body).toEqual({ queryCount: total });
        let page = await big.call('POST', 'Tickets/query', { filter: [{ op: 'exist', field: 'id' }], MaxRecords: 500 });
        let seen = page.body.items.length;
        let last = page.body.items.at(-1).id;
        for (let n = 0; page.body.pageDetails.nextPageUrl && n < 200; n++) {
          page = await big.call('GET', page.body.pageDetails.nextPageUrl);
          expect(page.body.items[0].id).toBeGreaterThan(last);
          last = page.body.items.at(-1).id;
          seen += page.body.items.length;
        }
        expect(seen).toBe(total);
      } finally {
        await big.server.close();
      }
    });
  });
});

describe('Autotask simulator limits', () => {
  it('refuses with 429 and Retry-After once the hourly request budget is spent', async () => {
    const s = await startSim({ requestsPerHour: 5, latencyPast50PctMs: 0, latencyPast75PctMs: 0 });
    try {
      for (let i = 0; i < 5; i++) expect((await s.call('GET', 'Tickets/7001')).status).toBe(200);
      const refused = await s.call('GET', 'Companies/1');
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(refused.body.errors[0]).toMatch(/threshold/);
      expect(s.sim.requestsUsed(AUTOTASK_DEMO_INSTANCE)).toBe(5);
      // Zone discovery is not counted or limited.
      expect((await s.call('GET', 'ZoneInformation?user=sandbox', undefined, {})).status).toBe(200);
    } finally {
      await s.server.close();
    }
  });

  it('refuses a 4th concurrent request to one entity with 429, but not one to another entity', async () => {
    const s = await startSim({ responseDelayMs: 400 });
    try {
      const query = () => s.call('POST', 'Tickets/query', { filter: [{ op: 'exist', field: 'id' }], MaxRecords: 5 });
      const answers = await Promise.all([query(), query(), query(), query(), s.call('GET', 'Companies/1')]);
      const ticketStatuses = answers.slice(0, 4).map((a) => a.status).sort();
      expect(ticketStatuses).toEqual([200, 200, 200, 429]);
      const refused = answers.find((a) => a.status === 429)!;
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(refused.body.errors[0]).toMatch(/thread/);
      expect(answers[4].status).toBe(200);
      // The slots are free again once the answers are out.
      expect((await query()).status).toBe(200);
    } finally {
      await s.server.close();
    }
  });
});
