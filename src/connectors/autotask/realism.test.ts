/**
 * Autotask as strict as the real one:
 * - ticket time is entered in the ticket's `assignedResourceRoleID` unless the database allows users to
 *   change the role (TimeEntries entity docs, quoted in WYRE-AI/autotask-mcp issue 280);
 * - GET <Entity>/<id> of an unknown id answers 404 (docs/vendors.md second pass, citing @apigrate/autotask-restapi);
 * - TicketNotes noteType and publish are per-database picklists.
 */
import { startStandalone } from '../../simulators/kit';
import { AUTOTASK_DEMO_INSTANCE, loadAutotaskDemoFixtures } from '../../simulators/autotask/demo-fixtures';
import { createAutotaskSimulator, type AutotaskSimulator } from '../../simulators/autotask/simulator';
import { VendorHttpClient } from '../vendor-http';
import { VendorValidationError } from '../vendor-errors';
import type { TimeEntryDraft, WriteContext } from '../write-types';
import { autotaskWriter as at } from './writer';

const fixtures = loadAutotaskDemoFixtures();
const I = AUTOTASK_DEMO_INSTANCE;
const HEADERS = { ApiIntegrationCode: 'SANDBOX', UserName: 'sandbox', Secret: 'sandbox-secret', 'content-type': 'application/json' };

type Row = Record<string, unknown>;
interface Running { sim: AutotaskSimulator; url: string; close: () => Promise<void> }

async function start(opts: Parameters<typeof createAutotaskSimulator>[0] = {}): Promise<Running> {
  const sim = createAutotaskSimulator(opts);
  const { url, close } = await startStandalone(sim);
  sim.seed(I, fixtures.resources);
  return { sim, url: `${url}/atservicesrest/v1.0`, close };
}

let strict: Running;
beforeAll(async () => {
  strict = await start();
});
afterAll(() => strict.close());
beforeEach(() => {
  strict.sim.reset();
  strict.sim.faults.clear();
  strict.sim.seed(I, fixtures.resources);
});

const ctx = (url = strict.url): WriteContext => ({
  baseUrl: url,
  credentials: { username: 'sandbox', secret: 'sandbox-secret', integrationCode: 'SANDBOX' },
  http: new VendorHttpClient({ baseDelayMs: 5, maxRetries: 1 }),
});
async function call(url: string, method: string, path: string, json?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}/${path}`, { method, headers: HEADERS, body: json === undefined ? undefined : JSON.stringify(json) });
  return { status: res.status, body: await res.json() };
}

let seq = 0;
// Resource 29682886's default service desk role is 29683402 (Technician II); ticket 7003 is assigned
// in role 29683401 (Technician I), ticket 7001 to nobody.
const time = (ticketRef: string, over: Partial<TimeEntryDraft> = {}): TimeEntryDraft => ({
  marker: `msp-at-${++seq}`, ticketRef, hours: 1, billable: true, memberRef: '29682886', start: new Date('2026-11-20T09:00:00Z'), ...over,
});
const ticketRole = (id: number) => (strict.sim.get(I, 'Tickets', id) as Row).assignedResourceRoleID;

describe('time entry role', () => {
  it('the simulator refuses a role other than the ticket\'s assignedResourceRoleID, in Autotask\'s error shape', async () => {
    expect(ticketRole(7003)).toBe(29683401);
    const body = {
      resourceID: 29682886, ticketID: 7003, roleID: 29683402, hoursWorked: 1,
      dateWorked: '2026-11-20T00:00:00Z', startDateTime: '2026-11-20T09:00:00Z', endDateTime: '2026-11-20T10:00:00Z',
    };
    const refused = await call(strict.url, 'POST', 'TimeEntries', body);
    expect(refused.status).toBe(500);
    expect(refused.body).toEqual({ errors: [expect.stringContaining('assignedResourceRoleID')] });
    expect((await call(strict.url, 'POST', 'TimeEntries', { ...body, roleID: 29683401 })).status).toBe(200);

    // A database that allows users to modify the role takes it.
    const lenient = await start({ allowTimeEntryRoleChange: true });
    try {
      expect((await call(lenient.url, 'POST', 'TimeEntries', body)).status).toBe(200);
    } finally {
      await lenient.close();
    }
  });

  it('the connector enters ticket time in the ticket\'s role, and in the resource\'s default role on an unassigned ticket', async () => {
    const assigned = await at.createTimeEntry(ctx(), time('7003'));
    expect((strict.sim.get(I, 'TimeEntries', Number(assigned.timeEntryRef)) as Row).roleID).toBe(29683401);
    expect(ticketRole(7001)).toBeNull();
    const unassigned = await at.createTimeEntry(ctx(), time('7001'));
    expect((strict.sim.get(I, 'TimeEntries', Number(unassigned.timeEntryRef)) as Row).roleID).toBe(29683402);
  });
});

describe('unknown ids', () => {
  it('GET <Entity>/<id> answers 404 with Autotask\'s error body', async () => {
    const res = await call(strict.url, 'GET', 'Tickets/999999');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ errors: [expect.any(String)] });
    expect((await call(strict.url, 'GET', 'Resources/1')).status).toBe(404);
  });

  it('the connector turns a 404 into a field problem, not a crash', async () => {
    const noTicket = await at.createTimeEntry(ctx(), time('999999')).catch((e: unknown) => e);
    expect(noTicket).toBeInstanceOf(VendorValidationError);
    expect((noTicket as VendorValidationError).problems.map((p) => p.field)).toEqual(['ticket_ref']);
    const noResource = await at.createTimeEntry(ctx(), time('7003', { memberRef: '1' })).catch((e: unknown) => e);
    expect(noResource).toBeInstanceOf(VendorValidationError);
    expect((noResource as VendorValidationError).problems.map((p) => p.field)).toEqual(['member']);
    expect(strict.sim.list(I, 'TimeEntries').filter((e) => e.ticketID === 999999 || e.resourceID === 1)).toHaveLength(0);
  });
});

describe('note picklists', () => {
  it('takes noteType and publish from the database\'s TicketNotes picklists', async () => {
    // A database whose picklist values differ from the usual ones.
    const renumber: Record<string, Record<string, string>> = {
      noteType: { 'Task Summary': '11', 'Task Detail': '12', 'Task Notes': '13' },
      publish: { 'All Autotask Users': '21', 'Internal Only': '22' },
    };
    const noteFields = (fixtures.resources.TicketNoteFields as Row[]).map((f) => {
      const values = renumber[f.name as string];
      if (!values) return f;
      return { ...f, picklistValues: (f.picklistValues as Row[]).map((p) => ({ ...p, value: values[p.label as string] ?? p.value })) };
    });
    strict.sim.seed(I, { ...fixtures.resources, TicketNoteFields: noteFields });

    const internal = await at.addNote(ctx(), '7003', { marker: 'msp-n1', text: 'Reset the backup account.', internal: true, resolution: false });
    expect(strict.sim.get(I, 'TicketNotes', Number(internal.noteRef))).toMatchObject({ noteType: 13, publish: 22 });
    const resolution = await at.addNote(ctx(), '7003', { marker: 'msp-n2', text: 'Jobs green again.', internal: false, resolution: true });
    expect(strict.sim.get(I, 'TicketNotes', Number(resolution.noteRef))).toMatchObject({ noteType: 11, publish: 21 });
  });
});
