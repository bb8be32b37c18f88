/**
 * Kaseya BMS write side (BMS API 2.0). Every body is built by one function that both the preview and
 * the commit use, so a preview shows exactly what a commit sends (the account's main location, which
 * only BMS knows, shows as a value resolved at commit).
 *
 * Where our marker lives (BMS has no idempotency key and TicketInputDto no external-reference member):
 * - tickets: a trailing `[ref:<marker>]` line in `Details`, found with GET /v2/servicedesk/tickets
 *   `Filter.Details` (the bare marker), confirmed on the answer's Details;
 * - notes: the same line in the note's `Details`, found by reading the ticket's notes;
 * - time: the line in the entry's `InternalNotes` (staff only), found by reading the ticket's time logs.
 *
 * Refusals come back at HTTP 200 as `Success: false` and become field problems (client.ts, bmsWrite).
 */
import type { FieldMap } from '../vendor-errors';
import { defined, hasMarker, isNumericId, markerLine, markerSearchText, quoted, resolvedAtCommit, vendorId, withMarker } from '../write-support';
import type {
  CreatedTicket, FieldProblem, NoteDraft, TicketDraft, TicketPatch, TimeEntryDraft, WriteConnector, WriteContext,
} from '../write-types';
import { BMS_PAGE_SIZE, bmsWrite, type BmsRecord } from './client';

/**
 * Ids a ticket and a time log must name and our draft has no field for: BMS's default "New" status and
 * "Medium" priority, ticket type, source, work type, role and note type of a new BMS tenant (the sandbox's;
 * a ticket's vendor-native fields override the ticket ones).
 */
export const BMS_DEFAULTS = { statusId: 1, priorityId: 2, typeId: 1, sourceId: 4, workTypeId: 1, roleId: 1, noteTypeId: 1 } as const;

/** TicketInputDto's Title and Details have no documented maximum; BMS's UI keeps titles to 255 characters (unconfirmed). */
const TITLE_MAX = 255;

const TICKET_FIELDS: FieldMap = {
  title: 'summary', details: 'description', accountid: 'company_name', account: 'company_name', locationid: 'company_name', location: 'company_name',
  statusid: 'status', status: 'status', priorityid: 'priority', priority: 'priority', queueid: 'board', queue: 'board', ticket: 'ticket_ref',
};
const noteFields = (field: string): FieldMap => ({ details: field, ticket: 'ticket_ref', statusid: 'status' });
const TIME_FIELDS: FieldMap = { userid: 'member', user: 'member', starttime: 'start', endtime: 'hours', timespent: 'hours', ticket: 'ticket_ref' };

type Body = Record<string, unknown>;

const locationsPath = (accountId: string) => `/v2/crm/accounts/${accountId}/locations/lookup`;

// ---- Bodies (shared by preview and commit) ----

/** POST /v2/servicedesk/tickets (TicketInputDto): vendorNative first, ours over it. */
function ticketBody(d: TicketDraft, locationId: number | string, openDate: string): Body {
  return defined({
    TypeId: BMS_DEFAULTS.typeId,
    SourceId: BMS_DEFAULTS.sourceId,
    ...(d.vendorNative ?? {}),
    Title: d.summary,
    // The marker line makes the ticket findable with the documented Filter.Details.
    Details: withMarker(d.description ?? d.summary, d.marker),
    AccountId: d.companySourceId ? vendorId(d.companySourceId) : undefined,
    LocationId: locationId,
    StatusId: vendorId(d.statusSourceId ?? String(BMS_DEFAULTS.statusId)),
    PriorityId: vendorId(d.prioritySourceId ?? String(BMS_DEFAULTS.priorityId)),
    QueueId: d.boardSourceId ? vendorId(d.boardSourceId) : undefined,
    OpenDate: openDate,
  });
}

/** PATCH /v2/servicedesk/tickets/{ticketId}: a JSON Patch document, one `replace` per changed member. */
function patchBody(p: TicketPatch): Body[] {
  const members: [string, unknown][] = [
    ...Object.entries(p.vendorNative ?? {}),
    ['Title', p.summary], ['Details', p.description],
    ['StatusId', p.statusSourceId !== undefined ? vendorId(p.statusSourceId) : undefined],
    ['PriorityId', p.prioritySourceId !== undefined ? vendorId(p.prioritySourceId) : undefined],
    ['QueueId', p.boardSourceId !== undefined ? vendorId(p.boardSourceId) : undefined],
  ];
  return members.filter(([, v]) => v !== undefined).map(([member, value]) => ({ op: 'replace', path: `/${member}`, value }));
}

/** POST /v2/servicedesk/tickets/{ticketId}/notes (TicketNotePostInputDto). */
function noteBody(n: NoteDraft, noteDate: string): Body {
  return { Details: withMarker(n.text, n.marker), IsInternal: n.internal, TypeId: BMS_DEFAULTS.noteTypeId, NoteDate: noteDate };
}

const hhmmss = (d: Date) => d.toISOString().slice(11, 19);

/** POST /v2/servicedesk/tickets/{ticketId}/timelogs (TicketTimeEntryInputDto): a span on one day, in UTC. */
function timeEntryBody(t: TimeEntryDraft): Body {
  const start = new Date(Math.floor(t.start.getTime() / 1000) * 1000);
  const end = new Date(start.getTime() + Math.round(t.hours * 3_600_000));
  return defined({
    StartDate: start.toISOString().slice(0, 10),
    StartTime: hhmmss(start),
    EndTime: hhmmss(end),
    Timespent: Math.round(t.hours * 100) / 100,
    InternalNotes: markerLine(t.marker),
    WorkTypeId: BMS_DEFAULTS.workTypeId,
    RoleId: BMS_DEFAULTS.roleId,
    UserId: t.memberRef ? vendorId(t.memberRef) : undefined,
  });
}

// ---- Vendor rules ----

function idProblems(ids: [string, string | null | undefined][]): FieldProblem[] {
  return ids.filter(([, id]) => !isNumericId(id)).map(([field, id]) => ({ field, message: `${quoted(String(id))} is not a Kaseya BMS id.` }));
}

function titleProblems(title: string | undefined): FieldProblem[] {
  if (title === undefined) return [];
  if (!title.trim()) return [{ field: 'summary', message: 'Kaseya BMS requires a ticket title.' }];
  return title.length > TITLE_MAX ? [{ field: 'summary', message: `Kaseya BMS keeps a ticket title to ${TITLE_MAX} characters.` }] : [];
}

const noteField = (n: NoteDraft) => (n.resolution ? 'evidence' : 'note.text');

/**
 * The time a commit stamps on a new ticket or note (BMS requires OpenDate and NoteDate), in UTC with its
 * zone: the document types both `format: date-time`, RFC 3339's, which a time without an offset is not.
 */
const today = (ctx: { now?: () => number } | null) => `${new Date(ctx?.now?.() ?? Date.now()).toISOString().slice(0, 19)}Z`;

// ---- HTTP ----

async function mainLocation(ctx: WriteContext, accountId: string): Promise<number> {
  const rows = await bmsWrite<BmsRecord[] | null>(ctx, { method: 'GET', path: locationsPath(accountId) }, TICKET_FIELDS, 'company_name');
  const list = (Array.isArray(rows) ? rows : []).filter((l) => l && Number.isInteger(l.Id));
  const main = list.find((l) => l.IsMain === true) ?? list[0];
  if (!main) throw new Error(`Kaseya BMS account ${accountId} has no location to open a ticket at`);
  return main.Id as number;
}

async function notesOf(ctx: WriteContext, ticketRef: string, what: 'notes' | 'timelogs'): Promise<BmsRecord[]> {
  const rows = await bmsWrite<unknown>(ctx, { method: 'GET', path: `/v2/servicedesk/tickets/${ticketRef}/${what}` }, {}, 'ticket_ref');
  return (Array.isArray(rows) ? rows : []).filter((r): r is BmsRecord => !!r && typeof r === 'object');
}

// ---- The connector ----

export const kaseyaBmsWriter: WriteConnector = {
  name: 'kaseyabms',

  checkTicket(d) {
    const problems: FieldProblem[] = [...titleProblems(d.summary)];
    if (!d.companySourceId) problems.push({ field: 'company_name', message: `No company named ${quoted(d.companyName)} exists in Kaseya BMS.` });
    problems.push(...idProblems([
      ['company_name', d.companySourceId], ['board', d.boardSourceId], ['status', d.statusSourceId], ['priority', d.prioritySourceId],
    ]));
    return problems;
  },

  checkPatch(p) {
    return [...titleProblems(p.summary), ...idProblems([['board', p.boardSourceId], ['status', p.statusSourceId], ['priority', p.prioritySourceId]])];
  },

  checkNote(n) {
    return n.text.trim() ? [] : [{ field: noteField(n), message: 'Kaseya BMS requires the details of a note.' }];
  },

  checkTimeEntry(t) {
    const problems: FieldProblem[] = idProblems([['member', t.memberRef], ['ticket_ref', t.ticketRef]]);
    const start = Math.floor(t.start.getTime() / 1000) * 1000;
    const end = start + Math.round(t.hours * 3_600_000);
    // A BMS time log is a start and end time on one StartDate.
    if (new Date(start).toISOString().slice(0, 10) !== new Date(end - 1).toISOString().slice(0, 10)) {
      problems.push({ field: 'hours', message: 'A Kaseya BMS time log starts and ends on the same day (UTC); split the time at midnight.' });
    }
    return problems;
  },

  previewCreateTicket(d) {
    const account = d.companySourceId ?? '';
    return [
      { method: 'GET', path: locationsPath(account) },
      { method: 'POST', path: '/v2/servicedesk/tickets', body: ticketBody(d, resolvedAtCommit(`the main location of account ${account}`), resolvedAtCommit('the time of the commit')) },
    ];
  },

  previewUpdateTicket(ticketRef, p) {
    return [{ method: 'PATCH', path: `/v2/servicedesk/tickets/${ticketRef}`, body: patchBody(p) }];
  },

  previewAddNote(ticketRef, n) {
    return [{ method: 'POST', path: `/v2/servicedesk/tickets/${ticketRef}/notes`, body: noteBody(n, resolvedAtCommit('the time of the commit')) }];
  },

  previewTimeEntry(t) {
    return [{ method: 'POST', path: `/v2/servicedesk/tickets/${t.ticketRef}/timelogs`, body: timeEntryBody(t) }];
  },

  async createTicket(ctx, d) {
    const location = await mainLocation(ctx, d.companySourceId!);
    const created = await bmsWrite<BmsRecord>(ctx, { method: 'POST', path: '/v2/servicedesk/tickets', body: ticketBody(d, location, today(ctx)) }, TICKET_FIELDS, 'summary');
    if (!created || !Number.isInteger(created.Id)) throw new Error('Kaseya BMS answered a ticket create without the ticket');
    return { ticketRef: String(created.Id), native: created } satisfies CreatedTicket;
  },

  async findTicketByMarker(ctx, marker) {
    const rows = await bmsWrite<unknown>(ctx, {
      method: 'GET', path: '/v2/servicedesk/tickets', query: { 'Filter.Details': markerSearchText(marker), PageSize: BMS_PAGE_SIZE, PageNumber: 1 },
    }, TICKET_FIELDS, 'ticket_ref');
    // Bad rows (not objects) are skipped rather than crash the reconcile.
    const hit = (Array.isArray(rows) ? rows : []).find((t): t is BmsRecord => !!t && typeof t === 'object' && hasMarker(t.Details, marker));
    return hit ? { ticketRef: String(hit.Id), native: hit } : null;
  },

  async updateTicket(ctx, ticketRef, p) {
    return bmsWrite<BmsRecord>(ctx, { method: 'PATCH', path: `/v2/servicedesk/tickets/${ticketRef}`, body: patchBody(p) }, TICKET_FIELDS, 'ticket_ref');
  },

  async addNote(ctx, ticketRef, n) {
    const field = noteField(n);
    const note = await bmsWrite<BmsRecord>(ctx, { method: 'POST', path: `/v2/servicedesk/tickets/${ticketRef}/notes`, body: noteBody(n, today(ctx)) }, noteFields(field), field);
    return { noteRef: String(note?.Id) };
  },

  async findNoteByMarker(ctx, ticketRef, marker) {
    const note = (await notesOf(ctx, ticketRef, 'notes')).find((n) => hasMarker(n.Details, marker));
    return note ? { noteRef: String(note.Id) } : null;
  },

  async createTimeEntry(ctx, t) {
    const entry = await bmsWrite<BmsRecord>(ctx, { method: 'POST', path: `/v2/servicedesk/tickets/${t.ticketRef}/timelogs`, body: timeEntryBody(t) }, TIME_FIELDS, 'hours');
    return { timeEntryRef: String(entry?.Id) };
  },

  async findTimeEntryByMarker(ctx, t) {
    const entry = (await notesOf(ctx, t.ticketRef, 'timelogs')).find((e) => hasMarker(e.InternalNotes, t.marker));
    return entry ? { timeEntryRef: String(entry.Id) } : null;
  },
};
