import { startStandalone } from '../../simulators/kit';
import { createConnectWiseSimulator } from '../../simulators/connectwise/simulator';
import { loadConnectWiseFixtures } from '../../simulators/connectwise/fixtures';
import type { CwRecord } from '../../simulators/connectwise/store';
import { VendorHttpClient, VendorHttpError } from '../vendor-http';
import { VendorValidationError } from '../vendor-errors';
import type { NoteDraft, TicketDraft, TimeEntryDraft, WriteContext } from '../write-types';
import { connectwiseWriter as cw } from './writer';

const INSTANCE = 'sandbox-alpha';
const { resources: fixtures } = loadConnectWiseFixtures(INSTANCE);

const sim = createConnectWiseSimulator();
let mount: string;
let close: () => Promise<void>;

beforeAll(async () => {
  ({ url: mount, close } = await startStandalone(sim));
});
afterAll(() => close());
beforeEach(() => {
  sim.reset();
  sim.seed(INSTANCE, fixtures);
});

function ctx(): WriteContext {
  return {
    baseUrl: `${mount}/v4_6_release/apis/3.0`,
    credentials: { companyId: 'sandbox', publicKey: 'sandbox-public', privateKey: 'sandbox-private', clientId: '00000000-0000-0000-0000-000000000000' },
    http: new VendorHttpClient({ baseDelayMs: 5, maxRetries: 1 }),
  };
}

let seq = 0;
const marker = () => `wm-cw-${++seq}-${Date.now().toString(36)}`;

function draft(over: Partial<TicketDraft> = {}): TicketDraft {
  return {
    marker: marker(),
    summary: 'Low disk space on CONTOSO-FS01 (C: 3% free)',
    description: 'Volume C: on CONTOSO-FS01 has 3% free space left.',
    companyName: 'Contoso Ltd',
    companySourceId: '19291',
    boardSourceId: '1',
    statusSourceId: '1',
    prioritySourceId: '2',
    projectSourceId: null,
    vendorNative: null,
    ...over,
  };
}
const note = (over: Partial<NoteDraft> = {}): NoteDraft => ({ marker: marker(), text: 'Cleared 40 GB of old IIS logs.', internal: false, resolution: false, ...over });
const time = (ticketRef: string, over: Partial<TimeEntryDraft> = {}): TimeEntryDraft => ({
  marker: marker(), ticketRef, hours: 1.5, billable: true, memberRef: 'aokafor', start: new Date('2026-11-20T14:00:00Z'), ...over,
});

const stored = (resource: string, id: string) => sim.get(INSTANCE, resource, Number(id)) as CwRecord;
const withMarker = (resource: string, m: string) => sim.list(INSTANCE, resource).filter((r) => r.externalXRef === m);

describe('vendor rules', () => {
  it('refuses a summary over 100 characters and takes one of exactly 100', () => {
    expect(cw.checkTicket(draft({ summary: 'x'.repeat(101) }))).toEqual([
      { field: 'summary', message: expect.stringContaining('100 characters') },
    ]);
    expect(cw.checkTicket(draft({ summary: 'x'.repeat(100) }))).toEqual([]);
  });

  it('names the unknown company', () => {
    const problems = cw.checkTicket(draft({ companyName: 'Globex Corp', companySourceId: null }));
    expect(problems).toEqual([{ field: 'company_name', message: 'No company named "Globex Corp" exists in ConnectWise.' }]);
  });

  it('requires a member for a time entry, preview or commit, and positive hours', () => {
    expect(cw.checkTimeEntry(time('30101', { memberRef: null }))).toEqual([{ field: 'member', message: expect.any(String) }]);
    expect(cw.checkTimeEntry(time('30101', { hours: 0 })).map((p) => p.field)).toEqual(['hours']);
  });

  it('refuses replacing the description, an empty note and an empty resolution', () => {
    expect(cw.checkPatch({ description: 'new text' }).map((p) => p.field)).toEqual(['description']);
    expect(cw.checkNote(note({ text: '  ' }))).toEqual([{ field: 'note.text', message: expect.any(String) }]);
    expect(cw.checkNote(note({ text: '', resolution: true }))[0].field).toBe('evidence');
  });
});

describe('create', () => {
  it('sends exactly the previewed ticket and stores the marker in externalXRef', async () => {
    const d = draft();
    const [preview] = cw.previewCreateTicket(d);
    expect(preview).toMatchObject({ method: 'POST', path: '/service/tickets' });
    const body = preview.body as CwRecord;

    const created = await cw.createTicket(ctx(), d);
    const t = stored('tickets', created.ticketRef);
    expect(created.native).toEqual(t);
    expect(t.summary).toBe(body.summary);
    expect(t.externalXRef).toBe(d.marker);
    expect({ company: t.company.id, board: t.board.id, status: t.status.id, priority: t.priority.id })
      .toEqual({ company: body.company.id, board: body.board.id, status: body.status.id, priority: body.priority.id });
    const first = sim.list(INSTANCE, 'ticket_notes').filter((n) => n.ticketId === t.id);
    expect(first).toEqual([expect.objectContaining({ text: body.initialDescription, detailDescriptionFlag: true })]);
  });

  it('finds a created ticket by its marker, and nothing for another marker', async () => {
    const d = draft();
    const created = await cw.createTicket(ctx(), d);
    const found = await cw.findTicketByMarker(ctx(), d.marker);
    expect(found).toEqual({ ticketRef: created.ticketRef, native: stored('tickets', created.ticketRef) });
    expect(await cw.findTicketByMarker(ctx(), `${d.marker}-other`)).toBeNull();
  });

  it('reports a dropped answer as a network failure, and the marker then finds the one ticket made', async () => {
    const d = draft();
    sim.faults.inject({ status: 500, times: 1, method: 'POST', pathIncludes: '/service/tickets', afterHandler: 'drop' });
    const err = await cw.createTicket(ctx(), d).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VendorHttpError);
    expect((err as VendorHttpError).network).toBe(true);

    expect(withMarker('tickets', d.marker)).toHaveLength(1);
    const found = await cw.findTicketByMarker(ctx(), d.marker);
    expect(found?.ticketRef).toBe(String(withMarker('tickets', d.marker)[0].id));
  });

  it('turns a ConnectWise refusal into a validation error naming the request field', async () => {
    const tooLong = await cw.createTicket(ctx(), draft({ summary: 'y'.repeat(101) })).catch((e: unknown) => e);
    expect(tooLong).toBeInstanceOf(VendorValidationError);
    expect((tooLong as VendorValidationError).problems.map((p) => p.field)).toEqual(['summary']);

    // Status 7 belongs to another board: only ConnectWise knows.
    const wrongBoard = await cw.createTicket(ctx(), draft({ statusSourceId: '7' })).catch((e: unknown) => e);
    expect(wrongBoard).toBeInstanceOf(VendorValidationError);
    expect((wrongBoard as VendorValidationError).problems).toEqual([{ field: 'status', message: expect.any(String) }]);
    expect(sim.list(INSTANCE, 'tickets').filter((t) => t.summary === 'y'.repeat(101))).toHaveLength(0);
  });
});

describe('update', () => {
  it('sends the previewed JSON Patch and moves the ticket to the new status', async () => {
    const { ticketRef } = await cw.createTicket(ctx(), draft());
    const patch = { statusSourceId: '2', prioritySourceId: '1', summary: 'File server disk full' };
    const [preview] = cw.previewUpdateTicket(ticketRef, patch);
    expect(preview).toEqual({
      method: 'PATCH', path: `/service/tickets/${ticketRef}`,
      body: [
        { op: 'replace', path: '/summary', value: 'File server disk full' },
        { op: 'replace', path: '/status', value: { id: 2 } },
        { op: 'replace', path: '/priority', value: { id: 1 } },
      ],
    });
    const native = await cw.updateTicket(ctx(), ticketRef, patch);
    expect(native).toEqual(stored('tickets', ticketRef));
    expect({ s: native.summary, st: (native.status as CwRecord).id, p: (native.priority as CwRecord).id, c: native.closedFlag })
      .toEqual({ s: 'File server disk full', st: 2, p: 1, c: false });
  });

  it('closes the ticket when the status is a closed one', async () => {
    const { ticketRef } = await cw.createTicket(ctx(), draft());
    await cw.updateTicket(ctx(), ticketRef, { statusSourceId: '6' });
    const t = stored('tickets', ticketRef);
    expect(t.closedFlag).toBe(true);
    expect(t.closedDate).toEqual(expect.any(String));
  });
});

describe('notes and time', () => {
  it('adds internal and resolution notes as previewed and finds them by marker', async () => {
    const { ticketRef } = await cw.createTicket(ctx(), draft());
    const internal = note({ internal: true });
    const resolution = note({ text: 'Log rotation enabled; 41% free now.', resolution: true });
    const [preview] = cw.previewAddNote(ticketRef, internal);

    const a = await cw.addNote(ctx(), ticketRef, internal);
    const b = await cw.addNote(ctx(), ticketRef, resolution);
    const notes = new Map(sim.list(INSTANCE, 'ticket_notes').map((n) => [String(n.id), n]));
    expect(notes.get(a.noteRef)).toMatchObject(preview.body as CwRecord);
    expect(notes.get(a.noteRef)).toMatchObject({ internalAnalysisFlag: true, detailDescriptionFlag: false, resolutionFlag: false });
    expect(notes.get(b.noteRef)).toMatchObject({ resolutionFlag: true, internalAnalysisFlag: false });

    expect(await cw.findNoteByMarker(ctx(), ticketRef, resolution.marker)).toEqual(b);
    expect(await cw.findNoteByMarker(ctx(), ticketRef, `${resolution.marker}x`)).toBeNull();
  });

  it('records time as previewed (member, span, billing) and finds it by marker', async () => {
    const { ticketRef } = await cw.createTicket(ctx(), draft());
    const t = time(ticketRef, { billable: false, hours: 0.75 });
    const [preview] = cw.previewTimeEntry(t);
    expect(preview.body).toMatchObject({
      chargeToType: 'ServiceTicket', member: { identifier: 'aokafor' },
      timeStart: '2026-11-20T14:00:00Z', timeEnd: '2026-11-20T14:45:00Z', billableOption: 'DoNotBill',
    });

    const { timeEntryRef } = await cw.createTimeEntry(ctx(), t);
    const entry = stored('time_entries', timeEntryRef);
    const body = preview.body as CwRecord;
    expect({
      chargeToId: entry.chargeToId, member: entry.member.identifier, timeStart: entry.timeStart, timeEnd: entry.timeEnd,
      actualHours: entry.actualHours, billableOption: entry.billableOption, internalNotes: entry.internalNotes,
    }).toEqual({
      chargeToId: body.chargeToId, member: body.member.identifier, timeStart: body.timeStart, timeEnd: body.timeEnd,
      actualHours: body.actualHours, billableOption: body.billableOption, internalNotes: body.internalNotes,
    });
    expect(await cw.findTimeEntryByMarker(ctx(), t)).toEqual({ timeEntryRef });
    expect(await cw.findTimeEntryByMarker(ctx(), { ...t, marker: `${t.marker}x` })).toBeNull();
  });

  it('refuses time for an inactive member as a validation error on member', async () => {
    const { ticketRef } = await cw.createTicket(ctx(), draft());
    const err = await cw.createTimeEntry(ctx(), time(ticketRef, { memberRef: 'bschmidt' })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VendorValidationError);
    expect((err as VendorValidationError).problems.map((p) => p.field)).toEqual(['member']);
  });
});
