/**
 * Autotask PSA write side. Every body is built by one function that both the preview and the commit
 * use, so a preview shows exactly what a commit sends.
 *
 * Where our marker lives (what reconciliation queries):
 * - tickets: `externalID`, found with a query `eq externalID`;
 * - ticket notes: a trailing `[ref:<marker>]` line in `description`, found with `contains`;
 * - time entries: `internalNotes` holds the `[ref:<marker>]` line.
 *
 * Autotask refuses content with HTTP 500 (or 400) and `{errors: [...]}` (see ./errors.ts): that is a
 * VendorValidationError here, never retried. Creates are sent once (`retry: false`); queries are
 * reads and retry throttling.
 */
import { VendorHttpError } from '../vendor-http';
import { VendorValidationError, type FieldMap } from '../vendor-errors';
import { writerCall } from '../writer-http';
import {
  defined, hasMarker, isNumericId, markerLine, markerSearchText, quoted, resolvedAtCommit, timeEntrySpan, vendorId, withMarker,
} from '../write-support';
import type {
  CreatedTicket, FieldProblem, NoteDraft, TicketDraft, TicketPatch, TimeEntryDraft, VendorRequestPreview,
  WriteConnector, WriteContext,
} from '../write-types';
import { AUTOTASK_PAGE_SIZE, autotaskDialect, picklist, type FieldInfo, type FilterItem, type Native, type PicklistValue } from './client';

const TITLE_MAX = 255;
const DESCRIPTION_MAX = 8000;
const NOTE_DESCRIPTION_MAX = 32000;
const NOTE_TITLE_MAX = 250;
/** Tickets.externalID holds 50 characters (the simulator's reading of Autotask's field information). */
const EXTERNAL_ID_MAX = 50;
const HOURS_MAX = 24;

/**
 * Autotask requires status and priority on a ticket. When the caller names neither, the values every
 * Autotask database ships with: status New (1) and priority Medium (2), the picklists' defaults.
 */
const DEFAULT_STATUS = '1';
const DEFAULT_PRIORITY = '2';

/**
 * TicketNotes `noteType` and `publish` are per-database picklists (docs/vendors.md, second pass), so their
 * values are read from TicketNotes/entityInformation/fields at commit and chosen by label.
 */
const NOTE_FIELDS_PATH = '/TicketNotes/entityInformation/fields';
interface NotePicks {
  noteType: number | string;
  publish: number | string;
}

type Body = Record<string, unknown>;

const TICKET_FIELDS: FieldMap = {
  title: 'summary', description: 'description', companyid: 'company_name', company: 'company_name',
  queueid: 'board', status: 'status', priority: 'priority', externalid: 'idempotency_key', projectid: 'project_source_id',
};
const noteFields = (field: string): FieldMap => ({ description: field, title: field, ticketid: 'ticket_ref', ticket: 'ticket_ref' });
const TIME_FIELDS: FieldMap = {
  resourceid: 'member', resource: 'member', roleid: 'member', hoursworked: 'hours', startdatetime: 'hours',
  enddatetime: 'hours', dateworked: 'hours', ticketid: 'ticket_ref', isnonbillable: 'billable', internalnotes: 'idempotency_key',
};

// ---- Bodies (shared by preview and commit) ----

/** POST Tickets. vendorNative first, our fields over it, the marker last. */
function ticketBody(d: TicketDraft): Body {
  return defined({
    ...(d.vendorNative ?? {}),
    title: d.summary,
    description: d.description || undefined,
    companyID: d.companySourceId ? vendorId(d.companySourceId) : undefined,
    queueID: d.boardSourceId ? vendorId(d.boardSourceId) : undefined,
    status: vendorId(d.statusSourceId ?? DEFAULT_STATUS),
    priority: vendorId(d.prioritySourceId ?? DEFAULT_PRIORITY),
    externalID: d.marker,
  });
}

/** PATCH Tickets: the changed fields with the ticket's id. */
function patchBody(ticketRef: string, p: TicketPatch): Body {
  return defined({
    ...(p.vendorNative ?? {}),
    title: p.summary,
    description: p.description,
    status: p.statusSourceId !== undefined ? vendorId(p.statusSourceId) : undefined,
    priority: p.prioritySourceId !== undefined ? vendorId(p.prioritySourceId) : undefined,
    queueID: p.boardSourceId !== undefined ? vendorId(p.boardSourceId) : undefined,
    id: vendorId(ticketRef),
  });
}

/** The note's title (Autotask requires one): its first line, at most 250 characters. */
function noteTitle(n: NoteDraft): string {
  const first = n.text.split(/\r?\n/).map((l) => l.replace(/\s+/g, ' ').trim()).find((l) => l) ?? '';
  const title = n.resolution ? `Resolution: ${first}`.trim() : first;
  return title.length > NOTE_TITLE_MAX ? `${title.slice(0, NOTE_TITLE_MAX - 1)}…` : title;
}

/** POST Tickets/{id}/Notes; `picks` are the database's picklist values (placeholders in a preview). */
function noteBody(ticketRef: string, n: NoteDraft, picks: NotePicks): Body {
  return {
    ticketID: vendorId(ticketRef),
    title: noteTitle(n),
    description: withMarker(n.text, n.marker),
    noteType: picks.noteType,
    publish: picks.publish,
  };
}

/** What a preview shows for the picklist values a note takes at commit. */
function previewPicks(n: NoteDraft): NotePicks {
  return {
    noteType: resolvedAtCommit(`the ${n.resolution ? 'resolution ("Resolution", else "Task Summary")' : '"Task Notes"'} noteType of the database's TicketNotes picklist`),
    publish: resolvedAtCommit(`the ${n.internal ? '"Internal Only"' : '"All Autotask Users"'} publish value of the database's TicketNotes picklist`),
  };
}

/** Active picklist values of a field, and the value whose label first matches one of `labels` (in order). */
function pick(fields: FieldInfo[], name: string, labels: RegExp[]): PicklistValue | undefined {
  const values = [...picklist(fields, name).values()].filter((p) => p.isActive !== false);
  for (const re of labels) {
    const hit = values.find((p) => re.test(String(p.label ?? '')));
    if (hit) return hit;
  }
  return undefined;
}

/**
 * The note type and publish value for this note, by label: a resolution is "Resolution" (else the closing
 * "Task Summary"), any other note "Task Notes"; internal notes publish "Internal Only", others to all
 * users. A database without a matching value refuses the note rather than guess (an internal note must
 * never go out as public).
 */
async function notePicks(ctx: WriteContext, n: NoteDraft, field: string): Promise<NotePicks> {
  const body = await call<{ fields?: FieldInfo[] }>(ctx, { method: 'GET', path: NOTE_FIELDS_PATH }, {}, field);
  const fields = Array.isArray(body?.fields) ? body.fields.filter((f) => f && typeof f.name === 'string') : [];
  const regular = [/^task notes?$/i, /\bnotes?\b/i];
  const noteType = pick(fields, 'noteType', n.resolution ? [/resolution/i, /summary/i, ...regular] : regular);
  const publish = pick(fields, 'publish', n.internal ? [/internal/i] : [/^all\b/i, /\ball\b/i]);
  const missing = !noteType ? 'noteType' : !publish ? 'publish' : null;
  if (missing || !noteType || !publish) {
    throw new VendorValidationError('autotask', [{
      field, message: `This Autotask database has no ${missing} picklist value for a${n.internal ? 'n internal' : ''} ${n.resolution ? 'resolution' : 'note'}.`,
    }], 200, body);
  }
  const asValue = (v: string) => (/^\d+$/.test(v) ? Number(v) : v);
  return { noteType: asValue(String(noteType.value)), publish: asValue(String(publish.value)) };
}

const iso = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * POST TimeEntries. Ticket time is entered in a role: the ticket's `assignedResourceRoleID` ("The roleID
 * must be the same as ticketID.assignedResourceroleID" unless the database lets users change it:
 * TimeEntries entity docs, quoted in WYRE-AI/autotask-mcp issue 280), and on a ticket assigned to
 * nobody the resource's default service desk role. Only Autotask knows either (looked up at commit;
 * the preview names where it comes from).
 */
function timeEntryBody(t: TimeEntryDraft, roleId: number | string): Body {
  const { start, end } = timeEntrySpan(t.start, t.hours);
  return defined({
    resourceID: t.memberRef ? vendorId(t.memberRef) : undefined,
    ticketID: vendorId(t.ticketRef),
    roleID: roleId,
    dateWorked: `${iso(start).slice(0, 10)}T00:00:00Z`,
    startDateTime: iso(start),
    endDateTime: iso(end),
    hoursWorked: t.hours,
    isNonBillable: !t.billable,
    internalNotes: markerLine(t.marker),
  });
}

const resourcePath = (memberRef: string) => `/Resources/${memberRef}`;
const ticketPath = (ticketRef: string) => `/Tickets/${ticketRef}`;

// ---- Vendor rules ----

function lengthProblem(field: string, what: string, value: string | null | undefined, max: number): FieldProblem[] {
  return value && value.length > max
    ? [{ field, message: `Autotask allows at most ${max} characters in ${what}; this one has ${value.length}.` }]
    : [];
}

function idProblems(ids: [string, string | null | undefined][]): FieldProblem[] {
  return ids.filter(([, id]) => !isNumericId(id)).map(([field, id]) => ({ field, message: `${quoted(String(id))} is not an Autotask id.` }));
}

function titleProblems(summary: string | undefined): FieldProblem[] {
  if (summary === undefined) return [];
  if (!summary.trim()) return [{ field: 'summary', message: 'Autotask requires a ticket title.' }];
  return lengthProblem('summary', 'a ticket title', summary, TITLE_MAX);
}

const noteField = (n: NoteDraft) => (n.resolution ? 'evidence' : 'note.text');

// ---- HTTP ----

/** One Autotask call (writer-http.ts); `read` marks a POST <Entity>/query as safe to repeat. */
const call = writerCall(autotaskDialect);

/** The first page of a query (a marker matches one record). */
async function query(ctx: WriteContext, entity: string, filter: FilterItem[]): Promise<Native[]> {
  const body = await call<{ items?: Native[] }>(ctx, {
    method: 'POST', path: `/${entity}/query`, body: { filter, MaxRecords: AUTOTASK_PAGE_SIZE }, read: true,
  }, {}, 'ticket_ref');
  if (!body || !Array.isArray(body.items)) throw new Error(`autotask ${entity}/query: expected {items} in the answer`);
  return body.items;
}

/** One record by id; null when Autotask answers 404 for an unknown id (or an empty item). */
async function getItem(ctx: WriteContext, path: string, fields: FieldMap, fallback: string): Promise<Native | null> {
  try {
    const body = await call<{ item?: Native | null }>(ctx, { method: 'GET', path }, fields, fallback);
    const item = body?.item;
    return item && typeof item === 'object' ? item : null;
  } catch (err) {
    if (err instanceof VendorHttpError && err.status === 404) return null;
    throw err;
  }
}

async function readTicket(ctx: WriteContext, ticketRef: string): Promise<Native> {
  const item = await getItem(ctx, ticketPath(ticketRef), TICKET_FIELDS, 'ticket_ref');
  if (!item) {
    throw new VendorValidationError('autotask', [{ field: 'ticket_ref', message: `No Autotask ticket with id ${ticketRef} exists.` }], 404, null);
  }
  return item;
}

/**
 * The role this ticket's time is entered in: the ticket's assignedResourceRoleID, else (a ticket assigned
 * to nobody) the resource's default service desk role. The resource must exist and be active either way.
 */
async function timeEntryRole(ctx: WriteContext, ticketRef: string, memberRef: string): Promise<number> {
  const ticket = await readTicket(ctx, ticketRef);
  const resource = await getItem(ctx, resourcePath(memberRef), TIME_FIELDS, 'member');
  const problem = (message: string) => new VendorValidationError('autotask', [{ field: 'member', message }], 200, resource);
  if (!resource) throw problem(`No Autotask resource with id ${memberRef} exists.`);
  if (resource.isActive !== true) throw problem(`Autotask resource ${memberRef} is inactive; time cannot be entered for it.`);
  if (typeof ticket.assignedResourceRoleID === 'number') return ticket.assignedResourceRoleID;
  const role = resource.defaultServiceDeskRoleID;
  if (typeof role !== 'number') throw problem(`Autotask resource ${memberRef} has no default service desk role to enter time in.`);
  return role;
}

// ---- The connector ----

export const autotaskWriter: WriteConnector = {
  name: 'autotask',

  checkTicket(d) {
    const problems: FieldProblem[] = [
      ...titleProblems(d.summary),
      ...lengthProblem('description', 'a ticket description', d.description, DESCRIPTION_MAX),
    ];
    if (!d.companySourceId) problems.push({ field: 'company_name', message: `No company named ${quoted(d.companyName)} exists in Autotask.` });
    if (d.marker.length > EXTERNAL_ID_MAX) {
      problems.push({ field: 'idempotency_key', message: `The write marker is longer than the ${EXTERNAL_ID_MAX} characters Autotask keeps in externalID.` });
    }
    problems.push(...idProblems([
      ['company_name', d.companySourceId], ['board', d.boardSourceId], ['status', d.statusSourceId],
      ['priority', d.prioritySourceId],
    ]));
    return problems;
  },

  checkPatch(p) {
    return [
      ...titleProblems(p.summary),
      ...lengthProblem('description', 'a ticket description', p.description, DESCRIPTION_MAX),
      ...idProblems([['board', p.boardSourceId], ['status', p.statusSourceId], ['priority', p.prioritySourceId]]),
    ];
  },

  checkNote(n) {
    const field = noteField(n);
    if (!n.text.trim()) return [{ field, message: 'Autotask requires the text of a note.' }];
    // The marker line is part of what Autotask stores.
    const stored = withMarker(n.text, n.marker);
    return stored.length > NOTE_DESCRIPTION_MAX
      ? [{ field, message: `Autotask allows at most ${NOTE_DESCRIPTION_MAX} characters in a note; this one needs ${stored.length}.` }]
      : [];
  },

  checkTimeEntry(t) {
    const problems: FieldProblem[] = [];
    if (!(t.hours > 0 && t.hours <= HOURS_MAX)) {
      problems.push({ field: 'hours', message: `Autotask takes more than 0 and at most ${HOURS_MAX} hours in one time entry.` });
    }
    if (!t.memberRef) {
      problems.push({ field: 'member', message: 'Autotask records time against a resource; name the member who did the work.' });
    }
    problems.push(...idProblems([['member', t.memberRef], ['ticket_ref', t.ticketRef]]));
    return problems;
  },

  previewCreateTicket(d) {
    return [{ method: 'POST', path: '/Tickets', body: ticketBody(d) }];
  },

  previewUpdateTicket(ticketRef, p) {
    return [{ method: 'PATCH', path: '/Tickets', body: patchBody(ticketRef, p) }];
  },

  previewAddNote(ticketRef, n) {
    return [
      { method: 'GET', path: NOTE_FIELDS_PATH },
      { method: 'POST', path: `/Tickets/${ticketRef}/Notes`, body: noteBody(ticketRef, n, previewPicks(n)) },
    ];
  },

  previewTimeEntry(t) {
    const lookup: VendorRequestPreview[] = [{ method: 'GET', path: ticketPath(t.ticketRef) }];
    if (t.memberRef) lookup.push({ method: 'GET', path: resourcePath(t.memberRef) });
    const role = resolvedAtCommit(`assignedResourceRoleID of ticket ${t.ticketRef}; on an unassigned ticket, defaultServiceDeskRoleID of resource ${t.memberRef ?? '(the member)'}`);
    return [...lookup, { method: 'POST', path: '/TimeEntries', body: timeEntryBody(t, role) }];
  },

  createTicket(ctx, d) {
    return createTicket(ctx, d);
  },

  async findTicketByMarker(ctx, marker) {
    const found = (await query(ctx, 'Tickets', [{ op: 'eq', field: 'externalID', value: marker }])).find((t) => t.externalID === marker);
    return found ? { ticketRef: String(found.id), native: found } : null;
  },

  async updateTicket(ctx, ticketRef, p) {
    await call(ctx, { method: 'PATCH', path: '/Tickets', body: patchBody(ticketRef, p) }, TICKET_FIELDS, 'ticket_ref');
    // Autotask answers {itemId}; the record is read back.
    return readTicket(ctx, ticketRef);
  },

  async addNote(ctx, ticketRef, n) {
    const field = noteField(n);
    const picks = await notePicks(ctx, n, field);
    const { itemId } = await call<{ itemId: number }>(ctx, {
      method: 'POST', path: `/Tickets/${ticketRef}/Notes`, body: noteBody(ticketRef, n, picks),
    }, noteFields(field), field);
    return { noteRef: String(itemId) };
  },

  async findNoteByMarker(ctx, ticketRef, marker) {
    const notes = await query(ctx, 'TicketNotes', [
      { op: 'eq', field: 'ticketID', value: vendorId(ticketRef) },
      { op: 'contains', field: 'description', value: markerSearchText(marker) },
    ]);
    const note = notes.find((x) => hasMarker(x.description, marker));
    return note ? { noteRef: String(note.id) } : null;
  },

  async createTimeEntry(ctx, t) {
    if (!t.memberRef) {
      throw new VendorValidationError('autotask', [{ field: 'member', message: 'Autotask records time against a resource; name the member who did the work.' }], 0, null);
    }
    const roleId = await timeEntryRole(ctx, t.ticketRef, t.memberRef);
    const { itemId } = await call<{ itemId: number }>(ctx, { method: 'POST', path: '/TimeEntries', body: timeEntryBody(t, roleId) }, TIME_FIELDS, 'hours');
    return { timeEntryRef: String(itemId) };
  },

  async findTimeEntryByMarker(ctx, t) {
    const entries = await query(ctx, 'TimeEntries', [
      { op: 'eq', field: 'ticketID', value: vendorId(t.ticketRef) },
      { op: 'contains', field: 'internalNotes', value: markerSearchText(t.marker) },
    ]);
    const entry = entries.find((e) => hasMarker(e.internalNotes, t.marker));
    return entry ? { timeEntryRef: String(entry.id) } : null;
  },
};

async function createTicket(ctx: WriteContext, d: TicketDraft): Promise<CreatedTicket> {
  const { itemId } = await call<{ itemId: number }>(ctx, { method: 'POST', path: '/Tickets', body: ticketBody(d) }, TICKET_FIELDS, 'summary');
  // Autotask answers {itemId}; the created record is read back.
  return { ticketRef: String(itemId), native: await readTicket(ctx, String(itemId)) };
}
