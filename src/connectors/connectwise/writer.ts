/**
 * ConnectWise PSA (Manage) write side. Every body is built by one function that both the preview and
 * the commit use, so a preview shows exactly what a commit sends.
 *
 * Where our marker lives (what reconciliation queries):
 * - service tickets: `externalXRef` (max 100), found with `conditions=externalXRef = "..."` (project
 *   tickets and notes: project-writer.ts);
 * - ticket notes: a trailing `[ref:<marker>]` line in `text` (notes have no reference field);
 * - time entries: `internalNotes` holds the `[ref:<marker>]` line (internal, never on invoices).
 *
 * Every `conditions` names only fields the resource has: ConnectWise refuses any other name with 400
 * "... is not a recognized name" (LabtechConsulting/ConnectWise-Manage-Powershell issue 4). Text is
 * matched with `contains` on the bare marker (markerSearchText in write-support.ts says why) and
 * confirmed client-side on the full `[ref:<marker>]` line.
 *
 * Writes are sent once (`retry: false`): a POST repeated after a lost answer could land twice. Lookups
 * (GET) retry throttling as reads do.
 */
import type { FieldMap } from '../vendor-errors';
import { writerCall } from '../writer-http';
import {
  defined, hasMarker, isNumericId, markerLine, markerSearchText, quoted, timeEntrySpan, vendorId, withMarker,
} from '../write-support';
import type {
  FieldProblem, NoteDraft, TicketDraft, TicketPatch, TimeEntryDraft,
  WriteConnector, WriteContext,
} from '../write-types';
import { cwDate, cwDialect, CW_MAX_PAGE_SIZE, type CwNative } from './client';

const SUMMARY_MAX = 100;
const EXTERNAL_XREF_MAX = 100;
/** The simulator and ConnectWise refuse a single entry above a day. */
const HOURS_MAX = 24;

type Body = Record<string, unknown>;

const TICKET_FIELDS: FieldMap = {
  summary: 'summary', company: 'company_name', board: 'board', status: 'status', priority: 'priority',
  initialdescription: 'description', externalxref: 'idempotency_key', closedflag: 'status',
};
const NOTE_FIELDS: FieldMap = { text: 'note.text', member: 'member' };
const TIME_FIELDS: FieldMap = {
  member: 'member', actualhours: 'hours', timestart: 'hours', timeend: 'hours', chargetoid: 'ticket_ref',
  chargetotype: 'ticket_ref', billableoption: 'billable', internalnotes: 'idempotency_key',
};

const ref = (sourceId: string) => ({ id: vendorId(sourceId) });

/** ConnectWise timestamps: UTC, whole seconds, `Z`. */
function cwTime(d: Date): string {
  return cwDate(d).slice(1, -1);
}

// ---- Bodies (shared by preview and commit) ----

/**
 * POST /service/tickets. Our fields win over vendorNative ones with the same name; the marker always
 * goes last so nothing can displace it.
 */
function ticketBody(d: TicketDraft): Body {
  return defined({
    ...(d.vendorNative ?? {}),
    summary: d.summary,
    company: d.companySourceId ? ref(d.companySourceId) : undefined,
    board: d.boardSourceId ? ref(d.boardSourceId) : undefined,
    status: d.statusSourceId ? ref(d.statusSourceId) : undefined,
    priority: d.prioritySourceId ? ref(d.prioritySourceId) : undefined,
    // Write-only: ConnectWise stores it as the ticket's first (detail description) note.
    initialDescription: d.description || undefined,
    externalXRef: d.marker,
  });
}

/** JSON Patch for PATCH /service/tickets/{id}; vendorNative first, our fields after it. */
function patchOps(p: TicketPatch): Body[] {
  const ops: Body[] = [];
  for (const [key, value] of Object.entries(p.vendorNative ?? {})) ops.push({ op: 'replace', path: `/${key}`, value });
  if (p.summary !== undefined) ops.push({ op: 'replace', path: '/summary', value: p.summary });
  // Board first: ConnectWise resolves the status on the ticket's (new) board.
  if (p.boardSourceId !== undefined) ops.push({ op: 'replace', path: '/board', value: ref(p.boardSourceId) });
  if (p.statusSourceId !== undefined) ops.push({ op: 'replace', path: '/status', value: ref(p.statusSourceId) });
  if (p.prioritySourceId !== undefined) ops.push({ op: 'replace', path: '/priority', value: ref(p.prioritySourceId) });
  return ops;
}

/** POST /service/tickets/{id}/notes: the flags pick the ConnectWise tab the note shows in. */
function noteBody(n: NoteDraft): Body {
  return {
    text: withMarker(n.text, n.marker),
    detailDescriptionFlag: !n.internal && !n.resolution,
    internalAnalysisFlag: n.internal,
    resolutionFlag: n.resolution,
  };
}

/** POST /time/entries against a service ticket; the entry spans `hours` from `start`. */
function timeEntryBody(t: TimeEntryDraft): Body {
  const { start, end } = timeEntrySpan(t.start, t.hours);
  return defined({
    chargeToType: 'ServiceTicket',
    chargeToId: vendorId(t.ticketRef),
    member: t.memberRef ? { identifier: t.memberRef } : undefined,
    timeStart: cwTime(start),
    timeEnd: cwTime(end),
    actualHours: t.hours,
    billableOption: t.billable ? 'Billable' : 'DoNotBill',
    internalNotes: markerLine(t.marker),
  });
}

// ---- Vendor rules ----

function summaryProblems(summary: string | undefined, problems: FieldProblem[]): void {
  if (summary === undefined) return;
  if (!summary.trim()) problems.push({ field: 'summary', message: 'ConnectWise requires a ticket summary.' });
  else if (summary.length > SUMMARY_MAX) {
    problems.push({ field: 'summary', message: `ConnectWise allows at most ${SUMMARY_MAX} characters in a ticket summary; this one has ${summary.length}.` });
  }
}

function idProblems(ids: [string, string | null | undefined][], problems: FieldProblem[]): void {
  for (const [field, id] of ids) {
    if (!isNumericId(id)) problems.push({ field, message: `${quoted(String(id))} is not a ConnectWise id.` });
  }
}

function noteField(n: NoteDraft): string {
  return n.resolution ? 'evidence' : 'note.text';
}

// ---- HTTP ----

/** One ConnectWise call (writer-http.ts); a 400 (ConnectWise's validation refusal) becomes a VendorValidationError. */
const call = writerCall(cwDialect);

/** The first page (1000, ConnectWise's largest) of a list matching `conditions`, in id order: a marker matches one record. */
async function findAll(ctx: WriteContext, path: string, conditions: string, fields: FieldMap): Promise<CwNative[]> {
  const query = { pageSize: CW_MAX_PAGE_SIZE, page: 1, orderBy: 'id asc', conditions };
  const rows = await call<unknown>(ctx, { method: 'GET', path, query }, fields, 'ticket_ref');
  if (!Array.isArray(rows)) throw new Error(`connectwise ${path}: expected a JSON array`);
  return rows as CwNative[];
}

/** A text value inside ConnectWise conditions: double quotes, backslash-escaped. */
function condText(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

// ---- The connector ----

export const connectwiseWriter: WriteConnector = {
  name: 'connectwise',

  checkTicket(d) {
    const problems: FieldProblem[] = [];
    summaryProblems(d.summary, problems);
    if (!d.companySourceId) {
      problems.push({ field: 'company_name', message: `No company named ${quoted(d.companyName)} exists in ConnectWise.` });
    }
    if (d.marker.length > EXTERNAL_XREF_MAX) {
      problems.push({ field: 'idempotency_key', message: `The write marker is longer than the ${EXTERNAL_XREF_MAX} characters ConnectWise keeps in externalXRef.` });
    }
    idProblems([
      ['company_name', d.companySourceId], ['board', d.boardSourceId], ['status', d.statusSourceId],
      ['priority', d.prioritySourceId],
    ], problems);
    return problems;
  },

  checkPatch(p) {
    const problems: FieldProblem[] = [];
    summaryProblems(p.summary, problems);
    if (p.description !== undefined) {
      problems.push({
        field: 'description',
        message: 'ConnectWise keeps a ticket\'s description as its first note and does not let it be replaced; add a note instead.',
      });
    }
    idProblems([['board', p.boardSourceId], ['status', p.statusSourceId], ['priority', p.prioritySourceId]], problems);
    return problems;
  },

  checkNote(n) {
    return n.text.trim() ? [] : [{ field: noteField(n), message: 'ConnectWise requires the text of a note.' }];
  },

  checkTimeEntry(t) {
    const problems: FieldProblem[] = [];
    if (!(t.hours > 0)) problems.push({ field: 'hours', message: 'ConnectWise needs a time entry of more than 0 hours.' });
    else if (t.hours > HOURS_MAX) problems.push({ field: 'hours', message: `ConnectWise takes at most ${HOURS_MAX} hours in one time entry.` });
    if (!t.memberRef) {
      problems.push({ field: 'member', message: 'ConnectWise records time against a member; name the member who did the work.' });
    }
    idProblems([['ticket_ref', t.ticketRef]], problems);
    return problems;
  },

  previewCreateTicket(d) {
    return [{ method: 'POST', path: '/service/tickets', body: ticketBody(d) }];
  },

  previewUpdateTicket(ticketRef, p) {
    const ops = patchOps(p);
    return ops.length ? [{ method: 'PATCH', path: `/service/tickets/${ticketRef}`, body: ops }] : [];
  },

  previewAddNote(ticketRef, n) {
    return [{ method: 'POST', path: `/service/tickets/${ticketRef}/notes`, body: noteBody(n) }];
  },

  previewTimeEntry(t) {
    return [{ method: 'POST', path: '/time/entries', body: timeEntryBody(t) }];
  },

  async createTicket(ctx, d) {
    const ticket = await call<CwNative>(ctx, { method: 'POST', path: '/service/tickets', body: ticketBody(d) }, TICKET_FIELDS, 'summary');
    return { ticketRef: String(ticket.id), native: ticket };
  },

  async findTicketByMarker(ctx, marker) {
    // Service tickets only: ProjectTicket has no externalXRef (a condition on it is a 400); project
    // tickets are written and reconciled by project-writer.ts.
    const conditions = `externalXRef = ${condText(marker)}`;
    const found = (await findAll(ctx, '/service/tickets', conditions, TICKET_FIELDS)).find((t) => t.externalXRef === marker);
    return found ? { ticketRef: String(found.id), native: found } : null;
  },

  async updateTicket(ctx, ticketRef, p) {
    const ops = patchOps(p);
    const path = `/service/tickets/${ticketRef}`;
    if (!ops.length) return call<CwNative>(ctx, { method: 'GET', path }, TICKET_FIELDS, 'ticket_ref');
    return call<CwNative>(ctx, { method: 'PATCH', path, body: ops }, TICKET_FIELDS, 'ticket_ref');
  },

  async addNote(ctx, ticketRef, n) {
    const fields: FieldMap = { ...NOTE_FIELDS, text: noteField(n) };
    const note = await call<CwNative>(ctx, { method: 'POST', path: `/service/tickets/${ticketRef}/notes`, body: noteBody(n) }, fields, noteField(n));
    return { noteRef: String(note.id) };
  },

  async findNoteByMarker(ctx, ticketRef, marker) {
    const notes = await findAll(ctx, `/service/tickets/${ticketRef}/notes`, `text contains ${condText(markerSearchText(marker))}`, NOTE_FIELDS);
    const note = notes.find((x) => hasMarker(x.text, marker));
    return note ? { noteRef: String(note.id) } : null;
  },

  async createTimeEntry(ctx, t) {
    const entry = await call<CwNative>(ctx, { method: 'POST', path: '/time/entries', body: timeEntryBody(t) }, TIME_FIELDS, 'hours');
    return { timeEntryRef: String(entry.id) };
  },

  async findTimeEntryByMarker(ctx, t) {
    const conditions = `chargeToType = "ServiceTicket" and chargeToId = ${Number(t.ticketRef)} and internalNotes contains ${condText(markerSearchText(t.marker))}`;
    const entry = (await findAll(ctx, '/time/entries', conditions, TIME_FIELDS)).find((e) => hasMarker(e.internalNotes, t.marker));
    return entry ? { timeEntryRef: String(entry.id) } : null;
  },
};
