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
import { defined, hasMarker, isNumericId, markerLine, markerSearchText, quoted, resolvedAtCommit, timeEntrySpan, vendorId, withMarker } from '../write-support';
import type {
  CreatedTicket, FieldProblem, NoteDraft, TicketDraft, TicketPatch, TimeEntryDraft, WriteConnector, WriteContext,
} from '../write-types';
import { BMS_PAGE_SIZE, bmsPages, bmsWrite, type BmsRecord } from './client';

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

const DAY_MS = 86_400_000;
/** The last time a BMS time log can end on its StartDate: 23:59:59 (EndTime is a time of that day). */
const LAST_SECOND_MS = DAY_MS - 1000;
/** The most hours one time log holds: a day. */
const MAX_HOURS = 24;

/**
 * The span a time log is sent as, on one UTC day: the entry's own span when it ends on the day it starts;
 * one that crosses a midnight (the service derives the start as the time of the post minus the hours,
 * so any entry posted shortly after 00:00 UTC does) is placed on the day it starts, ending at 23:59:59,
 * so it stays on one day and in the past. `Timespent` carries the hours either way. Null when the hours
 * cannot fit one day.
 */
function oneDaySpan(t: TimeEntryDraft): { start: Date; end: Date } | null {
  if (!(t.hours <= MAX_HOURS)) return null;
  const span = timeEntrySpan(t.start, t.hours);
  const last = Math.floor(span.start.getTime() / DAY_MS) * DAY_MS + LAST_SECOND_MS;
  if (span.end.getTime() <= last) return span;
  const length = Math.min(span.end.getTime() - span.start.getTime(), LAST_SECOND_MS);
  return { start: new Date(last - length), end: new Date(last) };
}

/** POST /v2/servicedesk/tickets/{ticketId}/timelogs (TicketTimeEntryInputDto): a span on one day, in UTC. */
function timeEntryBody(t: TimeEntryDraft): Body {
  const span = oneDaySpan(t);
  if (!span) throw new Error(`A Kaseya BMS time log holds at most ${MAX_HOURS} hours`);
  const { start, end } = span;
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

/** Every note or time log of a ticket, every page (a ticket past one page still has the record just made found). */
async function notesOf(ctx: WriteContext, ticketRef: string, what: 'notes' | 'timelogs'): Promise<BmsRecord[]> {
  // The vendor session drops rows that are not records (vendor-session.ts), as on every list.
  const out: BmsRecord[] = [];
  for await (const page of bmsPages(ctx, `/v2/servicedesk/tickets/${ticketRef}/${what}`)) out.push(...page);
  return out;
}

/** The id BMS answered a created record with, or a throw: a ref of "undefined" would stand for nothing. */
function createdId(rec: BmsRecord | null | undefined, what: string): string {
  if (!rec || !Number.isInteger(rec.Id)) throw new Error(`Kaseya BMS answered a ${what} create without the ${what}`);
  return String(rec.Id);
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
    // A BMS time log is a start and end time on one StartDate: a span crossing midnight is moved onto
    // its first day (oneDaySpan); more than a day cannot be.
    if (!oneDaySpan(t)) {
      problems.push({ field: 'hours', message: `A Kaseya BMS time log is on one day: at most ${MAX_HOURS} hours; split the time into entries of a day or less.` });
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
    return { noteRef: createdId(note, 'note') };
  },

  async findNoteByMarker(ctx, ticketRef, marker) {
    const note = (await notesOf(ctx, ticketRef, 'notes')).find((n) => hasMarker(n.Details, marker));
    return note ? { noteRef: String(note.Id) } : null;
  },

  async createTimeEntry(ctx, t) {
    const entry = await bmsWrite<BmsRecord>(ctx, { method: 'POST', path: `/v2/servicedesk/tickets/${t.ticketRef}/timelogs`, body: timeEntryBody(t) }, TIME_FIELDS, 'hours');
    return { timeEntryRef: createdId(entry, 'time log') };
  },

  async findTimeEntryByMarker(ctx, t) {
    const entry = (await notesOf(ctx, t.ticketRef, 'timelogs')).find((e) => hasMarker(e.InternalNotes, t.marker));
    return entry ? { timeEntryRef: String(entry.Id) } : null;
  },
};
