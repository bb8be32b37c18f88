import { startStandalone } from '../../simulators/kit';
import { loadHaloFixtures } from '../../simulators/halopsa/fixtures';
import { createHaloPsaSimulator, type HaloPsaSimulator } from '../../simulators/halopsa/simulator';
import type { HaloRecord } from '../../simulators/halopsa/store';
import { VendorHttpClient, VendorHttpError } from '../vendor-http';
import { VendorValidationError } from '../vendor-errors';
import type { NoteDraft, TicketDraft, TimeEntryDraft, WriteContext } from '../write-types';
import { addProjectNote, haloPsaWriter as halo, previewProjectNote } from './writer';

const INSTANCE = 'sandbox-beta';
const fixtures = loadHaloFixtures(INSTANCE);

let sim: HaloPsaSimulator;
let server: { url: string; close: () => Promise<void> };

beforeAll(async () => {
  sim = createHaloPsaSimulator();
  server = await startStandalone(sim);
});
afterAll(() => server.close());
beforeEach(() => {
  sim.reset();
  sim.faults.clear();
  sim.seed(INSTANCE, fixtures.records);
});

function ctx(): WriteContext {
  return {
    baseUrl: server.url,
    credentials: { clientId: 'sandbox', clientSecret: 'sandbox-secret' },
    http: new VendorHttpClient({ baseDelayMs: 5, maxRetries: 1 }),
  };
}

let seq = 0;
const marker = () => `wm-halo-${++seq}-${Date.now().toString(36)}`;

function draft(over: Partial<TicketDraft> = {}): TicketDraft {
  return {
    marker: marker(),
    summary: 'BitLocker recovery key not escrowed on HDG-LT044',
    description: 'The device reports BitLocker on, but no recovery key is stored in Entra ID.',
    companyName: 'Harbourside Dental Group',
    companySourceId: '12',
    boardSourceId: null,
    statusSourceId: '1',
    prioritySourceId: '2',
    projectSourceId: null,
    vendorNative: null,
    ...over,
  };
}
const note = (over: Partial<NoteDraft> = {}): NoteDraft => ({ marker: marker(), text: 'Escrowed the key with manage-bde.', internal: false, resolution: false, ...over });
const time = (ticketRef: string, over: Partial<TimeEntryDraft> = {}): TimeEntryDraft => ({
  marker: marker(), ticketRef, hours: 0.5, billable: true, memberRef: '3', start: new Date('2026-11-20T09:00:00Z'), ...over,
});

/** The one element of a Halo write body. */
const element = (body: unknown) => (body as HaloRecord[])[0];
/** Every field the request sent, as the simulator stored it. */
const sentFields = (row: HaloRecord, body: HaloRecord) => Object.fromEntries(Object.keys(body).map((k) => [k, row[k]]));
const action = (id: string) => sim.get(INSTANCE, 'actions', Number(id)) as HaloRecord;

describe('vendor rules', () => {
  it('requires a summary and a known client, and has no boards', () => {
    expect(halo.checkTicket(draft({ summary: ' ' })).map((p) => p.field)).toEqual(['summary']);
    expect(halo.checkTicket(draft({ companyName: 'Globex Corp', companySourceId: null }))).toEqual([
      { field: 'company_name', message: 'No company named "Globex Corp" exists in HaloPSA.' },
    ]);
    expect(halo.checkTicket(draft({ boardSourceId: '4' })).map((p) => p.field)).toEqual(['board']);
    // Halo documents no summary limit.
    expect(halo.checkTicket(draft({ summary: 's'.repeat(300) }))).toEqual([]);
  });

  it('needs positive hours and note text, not a member', () => {
    expect(halo.checkTimeEntry(time('1001', { hours: 0 })).map((p) => p.field)).toEqual(['hours']);
    expect(halo.checkTimeEntry(time('1001', { memberRef: null }))).toEqual([]);
    expect(halo.checkNote(note({ text: '' })).map((p) => p.field)).toEqual(['note.text']);
  });
});

describe('create', () => {
  it('sends exactly the previewed ticket with the marker in third_party_id_string', async () => {
    const d = draft();
    const [preview] = halo.previewCreateTicket(d);
    expect(preview).toMatchObject({ method: 'POST', path: '/api/Tickets' });
    const body = element(preview.body);
    expect(body.third_party_id_string).toBe(d.marker);

    const created = await halo.createTicket(ctx(), d);
    const row = sim.get(INSTANCE, 'tickets', Number(created.ticketRef))!;
    expect(created.native).toEqual(row);
    expect(sentFields(row, body)).toEqual(body);
  });

  it('finds a created ticket by its marker, and nothing for another marker', async () => {
    const d = draft();
    const created = await halo.createTicket(ctx(), d);
    expect(await halo.findTicketByMarker(ctx(), d.marker)).toEqual(created);
    expect(await halo.findTicketByMarker(ctx(), `${d.marker}-other`)).toBeNull();
  });

  it('reports a dropped answer as a network failure, and the marker then finds the one ticket made', async () => {
    const d = draft();
    sim.faults.inject({ status: 500, times: 1, method: 'POST', pathIncludes: '/api/Tickets', afterHandler: 'drop' });
    const err = await halo.createTicket(ctx(), d).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VendorHttpError);
    expect((err as VendorHttpError).network).toBe(true);

    const made = sim.list(INSTANCE, 'tickets').filter((t) => t.third_party_id_string === d.marker);
    expect(made).toHaveLength(1);
    expect((await halo.findTicketByMarker(ctx(), d.marker))?.ticketRef).toBe(String(made[0].id));
  });

  it('turns a Halo refusal into a validation error naming the request field', async () => {
    const noClient = await halo.createTicket(ctx(), draft({ companySourceId: '99999' })).catch((e: unknown) => e);
    expect(noClient).toBeInstanceOf(VendorValidationError);
    expect((noClient as VendorValidationError).problems).toEqual([{ field: 'company_name', message: expect.stringContaining('99999') }]);

    const { ticketRef } = await halo.createTicket(ctx(), draft());
    const badStatus = await halo.updateTicket(ctx(), ticketRef, { statusSourceId: '77' }).catch((e: unknown) => e);
    expect((badStatus as VendorValidationError).problems.map((p) => p.field)).toEqual(['status']);
  });
});

describe('update', () => {
  it('sends the previewed update and moves the ticket to the new status', async () => {
    const { ticketRef } = await halo.createTicket(ctx(), draft());
    const patch = { statusSourceId: '2', prioritySourceId: '1', summary: 'BitLocker key missing on HDG-LT044' };
    const [preview] = halo.previewUpdateTicket(ticketRef, patch);
    expect(preview).toEqual({
      method: 'POST', path: '/api/Tickets',
      body: [{ summary: 'BitLocker key missing on HDG-LT044', status_id: 2, priority_id: 1, id: Number(ticketRef) }],
    });
    const native = await halo.updateTicket(ctx(), ticketRef, patch);
    expect(native).toEqual(sim.get(INSTANCE, 'tickets', Number(ticketRef)));
    expect(sentFields(native, element(preview.body))).toEqual(element(preview.body));
    expect(native.dateclosed).toBeNull();
  });

  it('closes the ticket when the status is Closed', async () => {
    const { ticketRef } = await halo.createTicket(ctx(), draft());
    const native = await halo.updateTicket(ctx(), ticketRef, { statusSourceId: '9' });
    expect(native.status_id).toBe(9);
    expect(native.dateclosed).toEqual(expect.any(String));
  });
});

describe('notes and time', () => {
  it('adds internal and resolution actions as previewed and finds them by marker', async () => {
    const { ticketRef } = await halo.createTicket(ctx(), draft());
    const internal = note({ internal: true });
    const resolution = note({ resolution: true, text: 'Key escrowed; compliance check passes.' });
    const [preview] = halo.previewAddNote(ticketRef, internal);

    const a = await halo.addNote(ctx(), ticketRef, internal);
    const b = await halo.addNote(ctx(), ticketRef, resolution);
    expect(sentFields(action(a.noteRef), element(preview.body))).toEqual(element(preview.body));
    expect(action(a.noteRef)).toMatchObject({ hiddenfromuser: true, outcome: 'Update' });
    expect(action(b.noteRef)).toMatchObject({ hiddenfromuser: false, outcome: 'Resolution' });

    expect(await halo.findNoteByMarker(ctx(), ticketRef, resolution.marker)).toEqual(b);
    expect(await halo.findNoteByMarker(ctx(), ticketRef, `${resolution.marker}x`)).toBeNull();
  });

  it('records time as an action with timetaken, as previewed, and finds it by marker', async () => {
    const { ticketRef } = await halo.createTicket(ctx(), draft());
    const t = time(ticketRef, { billable: false, hours: 1.25 });
    const [preview] = halo.previewTimeEntry(t);
    const body = element(preview.body);
    expect(body).toMatchObject({
      timetaken: 1.25, actisbillable: false, actionarrivaldate: '2026-11-20T09:00:00.000', actioncompletiondate: '2026-11-20T10:15:00.000',
    });

    const { timeEntryRef } = await halo.createTimeEntry(ctx(), t);
    expect(sentFields(action(timeEntryRef), body)).toEqual(body);
    expect(await halo.findTimeEntryByMarker(ctx(), t)).toEqual({ timeEntryRef });
    expect(await halo.findTimeEntryByMarker(ctx(), { ...t, marker: `${t.marker}x` })).toBeNull();
  });
});

describe('project notes', () => {
  it('writes a note on the project and finds it by marker', async () => {
    const d = draft({ summary: 'Conditional Access policy missing for guests', projectSourceId: '950' });
    const [preview] = previewProjectNote('950', d);
    expect(preview).toMatchObject({ method: 'POST', path: '/api/Actions' });

    const noteRef = await addProjectNote(ctx(), '950', d);
    const stored = action(noteRef);
    expect(stored.ticket_id).toBe(950);
    expect(sentFields(stored, element(preview.body))).toEqual(element(preview.body));
    expect(await halo.findNoteByMarker(ctx(), '950', d.marker)).toEqual({ noteRef });
    expect(await halo.findNoteByMarker(ctx(), '950', 'msp-not-sent')).toBeNull();
  });

  it('takes a create routed to a project as the same project note', async () => {
    const d = draft({ summary: 'Legacy SMBv1 enabled on file server', projectSourceId: '950' });
    expect(halo.previewCreateTicket(d)).toEqual(previewProjectNote('950', d));
    const created = await halo.createTicket(ctx(), d);
    expect(created).toEqual({ ticketRef: '950', native: sim.get(INSTANCE, 'projects', 950) });
    expect(await halo.findNoteByMarker(ctx(), '950', d.marker)).not.toBeNull();
  });

  it('refuses a note on the locked baseline project as a validation error on the project', async () => {
    const err = await addProjectNote(ctx(), '953', draft({ projectSourceId: '953' })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VendorValidationError);
    expect((err as VendorValidationError).problems.map((p) => p.field)).toEqual(['project_source_id']);
  });
});
