/**
 * Ticket writes as ConnectWise performs them: create with validation of summary and references,
 * JSON Patch updates (status drives closedFlag/closedDate), and notes. Every change bumps the
 * ticket's `_info.lastUpdated` with the simulator's monotonic clock.
 */
import { badRequest, FieldErrors, notFound } from './errors';
import {
  closedStatusOf, defaultPriority, defaultServiceBoard, defaultStatus, resolveRef, statusesOfBoard,
} from './references';
import {
  boardRef, clone, companyRef, contactRef, cwTime, memberRef, priorityRef, statusRef, type CwRecord, type Instance,
} from './store';

/** Who makes a change, and when (the simulator's clock reading for this change). */
export interface Change {
  by: string;
  at: Date;
}

export function touch(rec: CwRecord, change: Change): void {
  rec._info = { ...(rec._info ?? {}), lastUpdated: cwTime(change.at), updatedBy: change.by };
}

export function newInfo(change: Change): CwRecord {
  const t = cwTime(change.at);
  return { lastUpdated: t, updatedBy: change.by, dateEntered: t, enteredBy: change.by };
}

/** Removes undefined/null members: ConnectWise leaves empty fields out of its JSON. */
export function compact(rec: CwRecord): CwRecord {
  for (const k of Object.keys(rec)) if (rec[k] === undefined || rec[k] === null) delete rec[k];
  return rec;
}

/** Puts a ticket in a status, with the closed state ConnectWise derives from it. */
export function applyStatus(ticket: CwRecord, status: CwRecord, change: Change): void {
  const wasClosed = ticket.closedFlag === true;
  ticket.status = statusRef(status);
  ticket.closedFlag = status.closedStatus === true;
  if (ticket.closedFlag && !wasClosed) {
    ticket.closedDate = cwTime(change.at);
    ticket.closedBy = change.by;
  } else if (!ticket.closedFlag) {
    delete ticket.closedDate;
    delete ticket.closedBy;
  }
}

function checkText(errors: FieldErrors, field: string, value: unknown, max: number, required: boolean): void {
  if (value == null || (typeof value === 'string' && value.trim() === '')) {
    if (required) errors.required(field);
    return;
  }
  if (typeof value !== 'string') errors.invalid(field, `${field} must be a string.`);
  else if (value.length > max) errors.invalid(field, `${field} may not exceed ${max} characters.`);
}

/** Optional scalar ticket fields a client may set on create or patch. */
const TICKET_SCALARS: Record<string, 'string' | 'number' | 'boolean'> = {
  summary: 'string', externalXRef: 'string', severity: 'string', impact: 'string', siteName: 'string',
  contactName: 'string', contactEmailAddress: 'string', contactPhoneNumber: 'string', poNumber: 'string',
  requiredDate: 'string', budgetHours: 'number', customerUpdatedFlag: 'boolean', approved: 'boolean',
  closedFlag: 'boolean',
};
const MAX_LENGTH: Record<string, number> = {
  summary: 100, externalXRef: 100, siteName: 50, contactName: 62, contactEmailAddress: 250, contactPhoneNumber: 20, poNumber: 50,
};

/** POST /service/tickets. */
export function createTicket(inst: Instance, body: unknown, change: Change): CwRecord {
  if (body == null || typeof body !== 'object' || Array.isArray(body)) throw badRequest('A ticket object is required');
  const b = body as CwRecord;
  const errors = new FieldErrors('ticket');
  checkText(errors, 'summary', b.summary, 100, true);
  checkText(errors, 'externalXRef', b.externalXRef, 100, false);

  let company: CwRecord | undefined;
  if (b.company == null) errors.required('company');
  else if (!(company = resolveRef(inst, 'companies', b.company))) errors.invalid('company', 'Company not found.');

  const board = b.board == null ? defaultServiceBoard(inst) : resolveRef(inst, 'boards', b.board);
  if (!board) errors.invalid('board', b.board == null ? 'No default service board is set up.' : 'Board not found.');

  let status: CwRecord | undefined;
  if (board) {
    status = b.status == null ? defaultStatus(inst, board.id) : resolveRef(inst, 'statuses', b.status, statusesOfBoard(inst, board.id));
    if (!status) errors.invalid('status', b.status == null ? 'The board has no statuses.' : 'Status not found on this board.');
  }
  const priority = b.priority == null ? defaultPriority(inst) : resolveRef(inst, 'priorities', b.priority);
  if (!priority) errors.invalid('priority', 'Priority not found.');

  let contact: CwRecord | undefined;
  if (b.contact != null && !(contact = resolveRef(inst, 'contacts', b.contact))) errors.invalid('contact', 'Contact not found.');
  let owner: CwRecord | undefined;
  if (b.owner != null && !(owner = resolveRef(inst, 'members', b.owner))) errors.invalid('owner', 'Member not found.');
  errors.throwIfAny();

  const t: CwRecord = {
    id: inst.nextId('tickets'),
    summary: b.summary,
    recordType: 'ServiceTicket',
    board: boardRef(board!),
    company: companyRef(company!),
    siteName: b.siteName ?? 'Main',
    contact: contact ? contactRef(contact) : undefined,
    contactName: b.contactName ?? (contact ? `${contact.firstName} ${contact.lastName}` : undefined),
    contactEmailAddress: b.contactEmailAddress,
    owner: owner ? memberRef(owner) : undefined,
    priority: priorityRef(priority!),
    severity: b.severity ?? 'Medium',
    impact: b.impact ?? 'Medium',
    externalXRef: b.externalXRef,
    poNumber: b.poNumber,
    requiredDate: b.requiredDate,
    budgetHours: b.budgetHours,
    closedFlag: false,
    actualHours: 0,
    approved: true,
    billTime: 'Billable',
    billExpenses: 'Billable',
    billProducts: 'Billable',
    customerUpdatedFlag: false,
    automaticEmailContactFlag: false,
    automaticEmailResourceFlag: false,
    automaticEmailCcFlag: false,
    _info: newInfo(change),
  };
  applyStatus(t, status!, change);
  compact(t);
  inst.insert('tickets', t);

  // initialDescription & co. are write-only: ConnectWise stores them as the ticket's first notes.
  const initial: [string, CwRecord][] = [
    ['initialDescription', { detailDescriptionFlag: true }],
    ['initialInternalAnalysis', { internalAnalysisFlag: true }],
    ['initialResolution', { resolutionFlag: true }],
  ];
  for (const [field, flags] of initial) {
    if (typeof b[field] === 'string' && b[field].trim()) insertNote(inst, t, { text: b[field], ...flags }, change);
  }
  return t;
}

export interface PatchOp {
  op: string;
  path: string;
  value?: unknown;
}

/** Reference fields a patch may set, and the table each points into. */
const REF_FIELDS: Record<string, string> = {
  status: 'statuses', priority: 'priorities', board: 'boards', company: 'companies', contact: 'contacts', owner: 'members',
};

/** PATCH /service/tickets/{id} (and /project/tickets/{id}) with a JSON Patch array. */
export function patchTicket(inst: Instance, resource: 'tickets' | 'project_tickets', id: number, ops: unknown, change: Change): CwRecord {
  const stored = inst.table(resource).get(id);
  if (!stored) throw notFound('Ticket', id);
  if (!Array.isArray(ops) || ops.length === 0) throw badRequest('The request body must be a JSON Patch array of operations');

  const draft = clone(stored);
  const errors = new FieldErrors('ticket');
  const refs: Record<string, unknown> = {};
  let closedFlag: boolean | undefined;

  for (const raw of ops) {
    const op = raw as PatchOp;
    if (!op || typeof op.path !== 'string' || typeof op.op !== 'string') throw badRequest('Each patch operation needs op and path');
    const kind = op.op.toLowerCase();
    if (!['replace', 'add', 'remove'].includes(kind)) throw badRequest(`Unsupported patch operation '${op.op}'`);
    const parts = op.path.replace(/^\//, '').split('/');
    const field = parts[0];

    if (field in REF_FIELDS) {
      // `status/id`, `status/name` or `status` with a reference object.
      if (kind === 'remove') { errors.invalid(field, `${field} cannot be removed.`); continue; }
      refs[field] = parts.length === 2 ? { [parts[1]]: op.value } : op.value;
      continue;
    }
    // ProjectTicket has no externalXRef (pyconnectwise ProjectTicket model): not a path of a project ticket.
    const type = resource === 'project_tickets' && field === 'externalXRef' ? undefined : TICKET_SCALARS[field];
    if (!type || parts.length !== 1) { errors.invalid(field || op.path, `Path '${op.path}' cannot be updated.`); continue; }
    if (kind === 'remove') {
      if (field === 'summary' || field === 'closedFlag') errors.required(field);
      else delete draft[field];
      continue;
    }
    if (typeof op.value !== type) { errors.invalid(field, `${field} must be a ${type}.`); continue; }
    if (field === 'closedFlag') { closedFlag = op.value as boolean; continue; }
    if (type === 'string') checkText(errors, field, op.value, MAX_LENGTH[field] ?? 1000, field === 'summary');
    draft[field] = op.value;
  }

  for (const [field, ref] of Object.entries(refs)) {
    if (field === 'status') continue; // after the board is known
    const target = resolveRef(inst, REF_FIELDS[field], ref);
    if (!target) { errors.invalid(field, `${field} not found.`); continue; }
    if (field === 'board') draft.board = boardRef(target);
    if (field === 'priority') draft.priority = priorityRef(target);
    if (field === 'company') draft.company = companyRef(target);
    if (field === 'contact') draft.contact = contactRef(target);
    if (field === 'owner') draft.owner = memberRef(target);
  }

  const boardId: number = draft.board?.id;
  let status: CwRecord | undefined;
  if ('status' in refs) {
    status = resolveRef(inst, 'statuses', refs.status, statusesOfBoard(inst, boardId));
    if (!status) errors.invalid('status', 'Status not found on the ticket\'s board.');
  } else if (boardId !== stored.board?.id) {
    // Moving boards without naming a status lands in the new board's default status.
    status = defaultStatus(inst, boardId);
    if (!status) errors.invalid('board', 'The board has no statuses.');
  } else if (closedFlag !== undefined && closedFlag !== (draft.closedFlag === true)) {
    status = closedFlag ? closedStatusOf(inst, boardId) : defaultStatus(inst, boardId);
    if (!status) errors.invalid('closedFlag', 'The board has no status to move the ticket to.');
  }
  errors.throwIfAny();

  if (status) applyStatus(draft, status, change);
  touch(draft, change);
  for (const k of Object.keys(stored)) delete stored[k];
  Object.assign(stored, draft);
  return stored;
}

function noteRecord(inst: Instance, ticket: CwRecord, body: CwRecord, member: CwRecord | undefined, change: Change): CwRecord {
  const flags = {
    detailDescriptionFlag: body.detailDescriptionFlag === true,
    internalAnalysisFlag: body.internalAnalysisFlag === true,
    resolutionFlag: body.resolutionFlag === true,
  };
  // A note with no flag would be invisible in every ConnectWise tab; treat it as a discussion note.
  if (!flags.detailDescriptionFlag && !flags.internalAnalysisFlag && !flags.resolutionFlag) flags.detailDescriptionFlag = true;
  const t = cwTime(change.at);
  return compact({
    id: inst.nextId('ticket_notes'),
    ticketId: ticket.id,
    text: body.text,
    ...flags,
    issueFlag: false,
    member: member ? memberRef(member) : undefined,
    dateCreated: t,
    createdBy: change.by,
    internalFlag: flags.internalAnalysisFlag,
    externalFlag: !flags.internalAnalysisFlag,
    _info: { lastUpdated: t, updatedBy: change.by },
  });
}

function insertNote(inst: Instance, ticket: CwRecord, body: CwRecord, change: Change, member?: CwRecord): CwRecord {
  const note = noteRecord(inst, ticket, body, member, change);
  inst.insert('ticket_notes', note);
  return note;
}

/** POST /service/tickets/{id}/notes: text required; adding a note is a change to the ticket. */
export function addTicketNote(inst: Instance, ticketId: number, body: unknown, change: Change): CwRecord {
  const ticket = inst.table('tickets').get(ticketId);
  if (!ticket) throw notFound('Ticket', ticketId);
  if (body == null || typeof body !== 'object' || Array.isArray(body)) throw badRequest('A note object is required');
  const b = body as CwRecord;
  const errors = new FieldErrors('ticketNote');
  checkText(errors, 'text', b.text, 1_000_000, true);
  let member: CwRecord | undefined;
  if (b.member != null && !(member = resolveRef(inst, 'members', b.member))) errors.invalid('member', 'Member not found.');
  errors.throwIfAny();
  const note = insertNote(inst, ticket, b, change, member);
  touch(ticket, change);
  return note;
}
