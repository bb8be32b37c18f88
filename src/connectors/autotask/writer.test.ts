import { startStandalone } from '../../simulators/kit';
import { AUTOTASK_DEMO_INSTANCE, loadAutotaskDemoFixtures } from '../../simulators/autotask/demo-fixtures';
import { createAutotaskSimulator, type AutotaskSimulator } from '../../simulators/autotask/simulator';
import { VendorHttpClient, VendorHttpError } from '../vendor-http';
import { VendorValidationError } from '../vendor-errors';
import type { NoteDraft, TicketDraft, TimeEntryDraft, WriteContext } from '../write-types';
import { autotaskWriter as at } from './writer';

const fixtures = loadAutotaskDemoFixtures();
const I = AUTOTASK_DEMO_INSTANCE;

let sim: AutotaskSimulator;
let server: { url: string; close: () => Promise<void> };

beforeAll(async () => {
  sim = createAutotaskSimulator();
  server = await startStandalone(sim);
});
afterAll(() => server.close());
beforeEach(() => {
  sim.reset();
  sim.faults.clear();
  sim.seed(I, fixtures.resources);
});

function ctx(): WriteContext {
  return {
    baseUrl: `${server.url}/atservicesrest/v1.0`,
    credentials: { username: 'sandbox', secret: 'sandbox-secret', integrationCode: 'SANDBOX' },
    http: new VendorHttpClient({ baseDelayMs: 5, maxRetries: 1 }),
  };
}

type Row = Record<string, unknown>;
let seq = 0;
const marker = () => `wm-at-${++seq}-${Date.now().toString(36)}`;

function draft(over: Partial<TicketDraft> = {}): TicketDraft {
  return {
    marker: marker(),
    summary: 'HL-DC01 backup job failed two nights running',
    description: 'Veeam job "HL-DC01 nightly" ended with error 0x80070005 on 11/19 and 11/20.',
    companyName: 'Harbor Logistics LLC',
    companySourceId: '3',
    boardSourceId: '29683481',
    statusSourceId: '1',
    prioritySourceId: '1',
    projectSourceId: null,
    vendorNative: null,
    ...over,
  };
}
const note = (over: Partial<NoteDraft> = {}): NoteDraft => ({ marker: marker(), text: 'Re-ran the job manually; it completed.', internal: false, resolution: false, ...over });
const time = (ticketRef: string, over: Partial<TimeEntryDraft> = {}): TimeEntryDraft => ({
  marker: marker(), ticketRef, hours: 1.25, billable: true, memberRef: '29682886', start: new Date('2026-11-20T15:30:00Z'), ...over,
});

const stored = (entity: 'Tickets' | 'TicketNotes' | 'TimeEntries', id: string) => sim.get(I, entity, Number(id)) as Row;
/** Every field the request sent, as the simulator stored it. */
const sentFields = (row: Row, body: Row) => Object.fromEntries(Object.keys(body).map((k) => [k, row[k]]));

describe('vendor rules', () => {
  it('refuses 25 hours and takes 24', () => {
    expect(at.checkTimeEntry(time('7001', { hours: 25 }))).toEqual([{ field: 'hours', message: expect.stringContaining('24') }]);
    expect(at.checkTimeEntry(time('7001', { hours: 24 }))).toEqual([]);
  });

  it('requires a resource for time, preview or commit, and a numeric one', () => {
    expect(at.checkTimeEntry(time('7001', { memberRef: null })).map((p) => p.field)).toEqual(['member']);
    expect(at.checkTimeEntry(time('7001', { memberRef: 'kokafor' })).map((p) => p.field)).toEqual(['member']);
  });

  it('checks title, description and company', () => {
    expect(at.checkTicket(draft({ summary: 't'.repeat(256) })).map((p) => p.field)).toEqual(['summary']);
    expect(at.checkTicket(draft({ summary: 't'.repeat(255) }))).toEqual([]);
    expect(at.checkTicket(draft({ description: 'd'.repeat(8001) })).map((p) => p.field)).toEqual(['description']);
    expect(at.checkTicket(draft({ companyName: 'Globex Corp', companySourceId: null }))).toEqual([
      { field: 'company_name', message: 'No company named "Globex Corp" exists in Autotask.' },
    ]);
  });

  it('counts the marker line against the 32000 characters of a note', () => {
    expect(at.checkNote(note({ text: 'n'.repeat(32000) })).map((p) => p.field)).toEqual(['note.text']);
    expect(at.checkNote(note({ text: 'n'.repeat(31000), resolution: true }))).toEqual([]);
    expect(at.checkNote(note({ text: ' ', resolution: true })).map((p) => p.field)).toEqual(['evidence']);
  });
});

describe('create', () => {
  it('sends exactly the previewed ticket, marker in externalID, and returns the record read back', async () => {
    const d = draft();
    const [preview] = at.previewCreateTicket(d);
    expect(preview).toMatchObject({ method: 'POST', path: '/Tickets' });
    const body = preview.body as Row;
    expect(body.externalID).toBe(d.marker);

    const created = await at.createTicket(ctx(), d);
    const row = stored('Tickets', created.ticketRef);
    expect(created.native).toEqual(row);
    expect(sentFields(row, body)).toEqual(body);
  });

  it('puts a ticket without status or priority in New with Medium priority', async () => {
    const d = draft({ statusSourceId: null, prioritySourceId: null });
    expect(at.previewCreateTicket(d)[0].body).toMatchObject({ status: 1, priority: 2 });
    const { ticketRef } = await at.createTicket(ctx(), d);
    expect(stored('Tickets', ticketRef)).toMatchObject({ status: 1, priority: 2 });
  });

  it('finds a created ticket by its marker, and nothing for another marker', async () => {
    const d = draft();
    const created = await at.createTicket(ctx(), d);
    expect(await at.findTicketByMarker(ctx(), d.marker)).toEqual(created);
    expect(await at.findTicketByMarker(ctx(), `${d.marker}-other`)).toBeNull();
  });

  it('reports a dropped answer as a network failure, and the marker then finds the one ticket made', async () => {
    const d = draft();
    sim.faults.inject({ status: 500, times: 1, method: 'POST', pathIncludes: '/Tickets', afterHandler: 'drop' });
    const err = await at.createTicket(ctx(), d).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VendorHttpError);
    expect((err as VendorHttpError).network).toBe(true);

    const made = sim.list(I, 'Tickets').filter((t) => t.externalID === d.marker);
    expect(made).toHaveLength(1);
    expect((await at.findTicketByMarker(ctx(), d.marker))?.ticketRef).toBe(String(made[0].id));
  });

  it('turns an Autotask refusal into a validation error naming the request field', async () => {
    const badStatus = await at.createTicket(ctx(), draft({ statusSourceId: '99' })).catch((e: unknown) => e);
    expect(badStatus).toBeInstanceOf(VendorValidationError);
    expect((badStatus as VendorValidationError).problems).toEqual([{ field: 'status', message: expect.stringContaining('99') }]);

    const longTitle = await at.createTicket(ctx(), draft({ summary: 'x'.repeat(300) })).catch((e: unknown) => e);
    expect((longTitle as VendorValidationError).problems.map((p) => p.field)).toEqual(['summary']);
  });
});

describe('update', () => {
  it('sends the previewed PATCH and moves the ticket to the new status', async () => {
    const { ticketRef } = await at.createTicket(ctx(), draft());
    const patch = { statusSourceId: '8', prioritySourceId: '4', summary: 'HL-DC01 backups failing' };
    const [preview] = at.previewUpdateTicket(ticketRef, patch);
    expect(preview).toEqual({
      method: 'PATCH', path: '/Tickets', body: { title: 'HL-DC01 backups failing', status: 8, priority: 4, id: Number(ticketRef) },
    });
    const native = await at.updateTicket(ctx(), ticketRef, patch);
    expect(native).toEqual(stored('Tickets', ticketRef));
    expect(sentFields(native, preview.body as Row)).toEqual(preview.body);
    expect(native.completedDate).toBeNull();
  });

  it('completes the ticket when the status is Complete', async () => {
    const { ticketRef } = await at.createTicket(ctx(), draft());
    const native = await at.updateTicket(ctx(), ticketRef, { statusSourceId: '5' });
    expect(native.status).toBe(5);
    expect(native.completedDate).toEqual(expect.any(String));
  });
});

describe('notes and time', () => {
  it('adds internal and resolution notes as previewed and finds them by marker', async () => {
    const { ticketRef } = await at.createTicket(ctx(), draft());
    const internal = note({ internal: true, text: 'Credentials of the backup account had expired.\nReset them in AD.' });
    const resolution = note({ resolution: true, text: 'Backup account password reset; both jobs green.' });
    const [lookup, preview] = at.previewAddNote(ticketRef, internal);
    // noteType and publish come from the database's picklists at commit.
    expect(lookup).toEqual({ method: 'GET', path: '/TicketNotes/entityInformation/fields' });
    const { noteType: _t, publish: _p, ...fixed } = preview.body as Row;
    expect(_t).toEqual(expect.stringContaining('resolved at commit'));

    const a = await at.addNote(ctx(), ticketRef, internal);
    const b = await at.addNote(ctx(), ticketRef, resolution);
    const rowA = stored('TicketNotes', a.noteRef);
    expect(sentFields(rowA, fixed)).toEqual(fixed);
    expect(rowA).toMatchObject({ title: 'Credentials of the backup account had expired.', publish: 2, noteType: 3 });
    expect(stored('TicketNotes', b.noteRef)).toMatchObject({ title: 'Resolution: Backup account password reset; both jobs green.', publish: 1, noteType: 1 });

    expect(await at.findNoteByMarker(ctx(), ticketRef, internal.marker)).toEqual(a);
    expect(await at.findNoteByMarker(ctx(), ticketRef, `${internal.marker}x`)).toBeNull();
  });

  it('enters time on an unassigned ticket in the resource\'s default role, as previewed, and finds it by marker', async () => {
    const { ticketRef } = await at.createTicket(ctx(), draft());
    const t = time(ticketRef, { billable: false });
    const preview = at.previewTimeEntry(t);
    expect(preview.map((r) => `${r.method} ${r.path}`)).toEqual([`GET /Tickets/${ticketRef}`, 'GET /Resources/29682886', 'POST /TimeEntries']);
    const body = preview[2].body as Row;
    expect(body).toMatchObject({
      resourceID: 29682886, ticketID: Number(ticketRef), startDateTime: '2026-11-20T15:30:00Z', endDateTime: '2026-11-20T16:45:00Z',
      hoursWorked: 1.25, isNonBillable: true, roleID: expect.stringContaining('resolved at commit'),
    });

    const { timeEntryRef } = await at.createTimeEntry(ctx(), t);
    const row = stored('TimeEntries', timeEntryRef);
    const { roleID: _placeholder, ...fixed } = body;
    expect(sentFields(row, fixed)).toEqual({
      ...fixed,
      // Autotask stores times with milliseconds.
      dateWorked: '2026-11-20T00:00:00.000Z', startDateTime: '2026-11-20T15:30:00.000Z', endDateTime: '2026-11-20T16:45:00.000Z',
    });
    expect(row.roleID).toBe(29683402);
    expect(await at.findTimeEntryByMarker(ctx(), t)).toEqual({ timeEntryRef });
    expect(await at.findTimeEntryByMarker(ctx(), { ...t, marker: `${t.marker}x` })).toBeNull();
  });

  it('maps Autotask refusals of time to the request fields', async () => {
    const { ticketRef } = await at.createTicket(ctx(), draft());
    const tooMuch = await at.createTimeEntry(ctx(), time(ticketRef, { hours: 25 })).catch((e: unknown) => e);
    expect(tooMuch).toBeInstanceOf(VendorValidationError);
    expect((tooMuch as VendorValidationError).problems.map((p) => p.field)).toEqual(['hours']);

    const inactive = await at.createTimeEntry(ctx(), time(ticketRef, { memberRef: '29682892' })).catch((e: unknown) => e);
    expect((inactive as VendorValidationError).problems.map((p) => p.field)).toEqual(['member']);
    expect(sim.list(I, 'TimeEntries').filter((e) => e.ticketID === Number(ticketRef))).toHaveLength(0);
  });
});
