/**
 * HaloPSA write side (the limited PSA connector). Halo writes are POSTs of a JSON array to the
 * collection; an element with `id` updates. Every body is built by one function that both the
 * preview and the commit use, so a preview shows exactly what a commit sends.
 *
 * Where our marker lives (what reconciliation queries):
 * - tickets: `third_party_id_string` (the integration reference on a Halo ticket) and a trailing
 *   `[ref:<marker>]` line in `details`. GET /api/Tickets has no filter on third_party_id_string (it is
 *   not among the parameters of Halo's swagger, and Halo ignores unknown parameters, answering its
 *   first page), so reconciliation searches with the documented `search_details` and confirms the
 *   match client-side on third_party_id_string or the details line;
 * - notes, time and project notes: Actions have no reference field, so a trailing `[ref:<marker>]`
 *   line in the action's `note`, found by reading the ticket's (or project's) actions. A ticket create
 *   routed to a project is a note on the project, so it is found with findNoteByMarker(projectRef, marker).
 *
 * Halo documents no maximum length for a ticket summary, so none is checked here; Halo refuses a
 * missing summary or client with 400 and a message, which becomes a VendorValidationError.
 */
import type { FieldMap } from '../vendor-errors';
import { writerCall } from '../writer-http';
import { defined, hasMarker, isNumericId, markerLine, quoted, timeEntrySpan, vendorId, withMarker } from '../write-support';
import type {
  CreatedTicket, FieldProblem, NoteDraft, TicketDraft, TicketPatch, TimeEntryDraft, VendorRequestPreview,
  WriteConnector, WriteContext,
} from '../write-types';
import { HALO_PAGE_SIZE, haloDialect, type HaloRecord } from './client';

/** Action outcomes (configurable per Halo instance; these are the sandbox's). */
const OUTCOME_UPDATE = 'Update';
const OUTCOME_RESOLUTION = 'Resolution';

const TICKET_FIELDS: FieldMap = {
  summary: 'summary', details: 'description', client: 'company_name', client_id: 'company_name',
  status: 'status', status_id: 'status', priority: 'priority', priority_id: 'priority', team: 'board',
  ticket: 'ticket_ref',
};
const noteFields = (field: string): FieldMap => ({ note: field, ticket: 'ticket_ref', ticket_id: 'ticket_ref' });
const TIME_FIELDS: FieldMap = { timetaken: 'hours', who_agentid: 'member', agent: 'member', ticket: 'ticket_ref', ticket_id: 'ticket_ref' };
const PROJECT_FIELDS: FieldMap = { note: 'summary', ticket: 'project_source_id', ticket_id: 'project_source_id' };

type Body = Record<string, unknown>;

/** A marker matches one ticket; a few rows read back is enough to confirm it. */
const MAX_CANDIDATES = 5;

/** Halo times: UTC without a zone suffix. */
const haloTime = (d: Date) => d.toISOString().slice(0, 23);

// ---- Bodies (shared by preview and commit); each is the array Halo takes ----

/** POST /api/Tickets, one element without id: vendorNative first, ours over it, the marker last. */
function ticketBody(d: TicketDraft): Body[] {
  return [defined({
    ...(d.vendorNative ?? {}),
    summary: d.summary,
    // The marker line makes the ticket findable with Halo's documented `search_details` filter.
    details: withMarker(d.description ?? '', d.marker),
    client_id: d.companySourceId ? vendorId(d.companySourceId) : undefined,
    status_id: d.statusSourceId ? vendorId(d.statusSourceId) : undefined,
    priority_id: d.prioritySourceId ? vendorId(d.prioritySourceId) : undefined,
    third_party_id_string: d.marker,
  })];
}

/** POST /api/Tickets, one element with id: an update. */
function patchBody(ticketRef: string, p: TicketPatch): Body[] {
  return [defined({
    ...(p.vendorNative ?? {}),
    summary: p.summary,
    details: p.description,
    status_id: p.statusSourceId !== undefined ? vendorId(p.statusSourceId) : undefined,
    priority_id: p.prioritySourceId !== undefined ? vendorId(p.prioritySourceId) : undefined,
    id: vendorId(ticketRef),
  })];
}

/** POST /api/Actions: a note; internal notes are hidden from the end user. */
function noteBody(ticketRef: string, n: NoteDraft): Body[] {
  return [{
    ticket_id: vendorId(ticketRef),
    outcome: n.resolution ? OUTCOME_RESOLUTION : OUTCOME_UPDATE,
    note: withMarker(n.text, n.marker),
    hiddenfromuser: n.internal,
  }];
}

/** POST /api/Actions: time in Halo is an action with `timetaken` (hours) on the ticket. */
function timeEntryBody(t: TimeEntryDraft): Body[] {
  const { start, end } = timeEntrySpan(t.start, t.hours);
  return [defined({
    ticket_id: vendorId(t.ticketRef),
    outcome: OUTCOME_UPDATE,
    note: markerLine(t.marker),
    timetaken: t.hours,
    actisbillable: t.billable,
    actionarrivaldate: haloTime(start),
    actioncompletiondate: haloTime(end),
    who_agentid: t.memberRef ? vendorId(t.memberRef) : undefined,
    hiddenfromuser: true,
  })];
}

/** POST /api/Actions on a project (projects are tickets in Halo): the finding as an internal note. */
function projectNoteBody(projectRef: string, d: TicketDraft): Body[] {
  const text = d.description ? `${d.summary}\n\n${d.description}` : d.summary;
  return [{ ticket_id: vendorId(projectRef), outcome: OUTCOME_UPDATE, note: withMarker(text, d.marker), hiddenfromuser: true }];
}

// ---- Vendor rules ----

function idProblems(ids: [string, string | null | undefined][]): FieldProblem[] {
  return ids.filter(([, id]) => !isNumericId(id)).map(([field, id]) => ({ field, message: `${quoted(String(id))} is not a HaloPSA id.` }));
}

const NO_BOARDS: FieldProblem = { field: 'board', message: 'HaloPSA boards are not available through this limited connector; leave board out.' };
const noteField = (n: NoteDraft) => (n.resolution ? 'evidence' : 'note.text');

// ---- HTTP: Bearer calls under /api with the connection's token (vendor-session.ts, through haloDialect) ----

/** One Halo call (writer-http.ts); a 401 (token revoked early) gets one fresh token; a 400 is a refusal. */
const call = writerCall(haloDialect);

/** Halo answers a one-element POST with the object (a longer one with an array). */
function single(body: unknown): HaloRecord {
  const rec = Array.isArray(body) ? body[0] : body;
  if (!rec || typeof rec !== 'object') throw new Error('HaloPSA answered a write without the written record');
  return rec as HaloRecord;
}

async function actionsOf(ctx: WriteContext, ticketRef: string): Promise<HaloRecord[]> {
  const body = await call<{ actions?: HaloRecord[] }>(ctx, { method: 'GET', path: '/api/Actions', query: { ticket_id: ticketRef } }, {}, 'ticket_ref');
  if (!body || !Array.isArray(body.actions)) throw new Error('HaloPSA /api/Actions answered without an actions list');
  return body.actions;
}

async function findAction(ctx: WriteContext, ticketRef: string, marker: string): Promise<{ noteRef: string } | null> {
  const action = (await actionsOf(ctx, ticketRef)).find((a) => hasMarker(a.note, marker));
  return action ? { noteRef: String(action.id) } : null;
}

async function addAction(ctx: WriteContext, body: Body[], fields: FieldMap, fallback: string): Promise<string> {
  return String(single(await call<unknown>(ctx, { method: 'POST', path: '/api/Actions', body }, fields, fallback)).id);
}

// ---- The connector ----

export const haloPsaWriter: WriteConnector = {
  name: 'halopsa',

  checkTicket(d) {
    const problems: FieldProblem[] = [];
    // A named project must be one the synced projects know, and not a baseline (no project header is created);
    // first, so its own code (404 or 409) is the answer.
    if (d.projectSourceId && d.projectState === 'missing') {
      problems.push({ field: 'project_source_id', code: 'project_requires_existing', message: `Project ${quoted(d.projectSourceId)} does not exist in HaloPSA; the service never creates a project header.` });
    } else if (d.projectSourceId && d.projectState === 'baseline') {
      problems.push({ field: 'project_source_id', code: 'project_not_writable', message: `Project ${quoted(d.projectSourceId)} is a baseline project and cannot take the write.` });
    }
    if (!d.summary.trim()) problems.push({ field: 'summary', message: 'HaloPSA requires a ticket summary.' });
    // A create routed to a project is a note on the project: no client needed.
    if (!d.projectSourceId && !d.companySourceId) {
      problems.push({ field: 'company_name', message: `No company named ${quoted(d.companyName)} exists in HaloPSA.` });
    }
    if (d.boardSourceId) problems.push(NO_BOARDS);
    problems.push(...idProblems([
      ['company_name', d.companySourceId], ['status', d.statusSourceId], ['priority', d.prioritySourceId],
      ['project_source_id', d.projectSourceId],
    ]));
    return problems;
  },

  checkPatch(p) {
    const problems: FieldProblem[] = [];
    if (p.summary !== undefined && !p.summary.trim()) problems.push({ field: 'summary', message: 'HaloPSA requires a ticket summary.' });
    if (p.boardSourceId !== undefined) problems.push(NO_BOARDS);
    problems.push(...idProblems([['status', p.statusSourceId], ['priority', p.prioritySourceId]]));
    return problems;
  },

  checkNote(n) {
    return n.text.trim() ? [] : [{ field: noteField(n), message: 'HaloPSA requires the text of a note.' }];
  },

  checkTimeEntry(t) {
    const problems: FieldProblem[] = [];
    if (!(t.hours > 0)) problems.push({ field: 'hours', message: 'HaloPSA needs more than 0 hours of time taken.' });
    problems.push(...idProblems([['member', t.memberRef], ['ticket_ref', t.ticketRef]]));
    return problems;
  },

  previewCreateTicket(d) {
    if (d.projectSourceId) return previewProjectNote(d.projectSourceId, d);
    return [{ method: 'POST', path: '/api/Tickets', body: ticketBody(d) }];
  },

  previewUpdateTicket(ticketRef, p) {
    return [{ method: 'POST', path: '/api/Tickets', body: patchBody(ticketRef, p) }];
  },

  previewAddNote(ticketRef, n) {
    return [{ method: 'POST', path: '/api/Actions', body: noteBody(ticketRef, n) }];
  },

  previewTimeEntry(t) {
    return [{ method: 'POST', path: '/api/Actions', body: timeEntryBody(t) }];
  },

  async createTicket(ctx, d) {
    if (d.projectSourceId) {
      // The limited connector writes the finding as a note on the project (reconcile with findNoteByMarker).
      await addProjectNote(ctx, d.projectSourceId, d);
      const project = await call<HaloRecord>(ctx, { method: 'GET', path: `/api/Projects/${d.projectSourceId}` }, PROJECT_FIELDS, 'project_source_id');
      return { ticketRef: d.projectSourceId, native: project } satisfies CreatedTicket;
    }
    const created = single(await call<unknown>(ctx, { method: 'POST', path: '/api/Tickets', body: ticketBody(d) }, TICKET_FIELDS, 'summary'));
    return { ticketRef: String(created.id), native: created };
  },

  async findTicketByMarker(ctx, marker) {
    // One documented search, newest first: `search_details` on the bare marker (no brackets: in a SQL
    // Server LIKE `[` opens a character class; whether Halo escapes it is unconfirmed). Should the search
    // ever be ignored, the newest page is still checked client-side, so a recent write is found either way.
    const body = await call<{ tickets?: HaloRecord[] }>(ctx, {
      method: 'GET', path: '/api/Tickets',
      query: { search_details: marker, order: 'id', orderdesc: true, pageinate: true, page_size: HALO_PAGE_SIZE, page_no: 1 },
    }, TICKET_FIELDS, 'ticket_ref');
    // Bad rows (not objects) are skipped rather than crash the reconcile.
    const rows = (Array.isArray(body?.tickets) ? body.tickets : []).filter((t): t is HaloRecord => !!t && typeof t === 'object');
    const carries = (t: HaloRecord) => t.third_party_id_string === marker || hasMarker(t.details, marker);
    const hit = rows.find(carries);
    if (hit) return { ticketRef: String(hit.id), native: hit };
    // List rows without either field (Halo trims list columns): the full record decides, for a few.
    const trimmed = rows.filter((t) => t.third_party_id_string === undefined && t.details === undefined).slice(0, MAX_CANDIDATES);
    for (const t of trimmed) {
      const full = await call<HaloRecord>(ctx, { method: 'GET', path: `/api/Tickets/${t.id}` }, TICKET_FIELDS, 'ticket_ref');
      if (full && carries(full)) return { ticketRef: String(full.id), native: full };
    }
    return null;
  },

  async updateTicket(ctx, ticketRef, p) {
    return single(await call<unknown>(ctx, { method: 'POST', path: '/api/Tickets', body: patchBody(ticketRef, p) }, TICKET_FIELDS, 'ticket_ref'));
  },

  async addNote(ctx, ticketRef, n) {
    const field = noteField(n);
    return { noteRef: await addAction(ctx, noteBody(ticketRef, n), noteFields(field), field) };
  },

  findNoteByMarker(ctx, ticketRef, marker) {
    return findAction(ctx, ticketRef, marker);
  },

  async createTimeEntry(ctx, t) {
    return { timeEntryRef: await addAction(ctx, timeEntryBody(t), TIME_FIELDS, 'hours') };
  },

  async findTimeEntryByMarker(ctx, t) {
    const found = await findAction(ctx, t.ticketRef, t.marker);
    return found ? { timeEntryRef: found.noteRef } : null;
  },
};

/**
 * A note on an existing project (an internal Action with the marker line): what a ticket create routed to
 * a project becomes here, and both kinds of project write of project-writer.ts. Found again with
 * findNoteByMarker(projectRef, marker).
 */
export function previewProjectNote(projectRef: string, d: TicketDraft): VendorRequestPreview[] {
  return [{ method: 'POST', path: '/api/Actions', body: projectNoteBody(projectRef, d) }];
}

/** Sends the project note of previewProjectNote; answers the action's id. */
export function addProjectNote(ctx: WriteContext, projectRef: string, d: TicketDraft): Promise<string> {
  return addAction(ctx, projectNoteBody(projectRef, d), PROJECT_FIELDS, 'project_source_id');
}
