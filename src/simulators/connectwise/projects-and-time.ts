/** Writes outside service tickets: time entries, project notes and project tickets. */
import { badRequest, FieldErrors, notFound } from './errors';
import { defaultPriority, defaultStatus, resolveRef } from './references';
import {
  boardRef, companyRef, cwTime, memberRef, phaseRef, priorityRef, projectRef, ticketRef, type CwRecord, type Instance,
} from './store';
import { applyStatus, compact, newInfo, touch, type Change } from './tickets';

const CHARGE_TO_TYPES = ['ServiceTicket', 'ProjectTicket', 'ChargeCode', 'Activity'] as const;
const BILLABLE_OPTIONS = ['Billable', 'DoNotBill', 'NoCharge', 'NoDefault'] as const;

function objectBody(body: unknown, what: string): CwRecord {
  if (body == null || typeof body !== 'object' || Array.isArray(body)) throw badRequest(`A ${what} object is required`);
  return body as CwRecord;
}

function isoOrNull(v: unknown): number | null {
  if (typeof v !== 'string') return null;
  const ms = Date.parse(v);
  return Number.isNaN(ms) ? null : ms;
}

/** POST /time/entries. The member must exist and be active; a ticket charge must hit a ticket. */
export function createTimeEntry(inst: Instance, body: unknown, change: Change): CwRecord {
  const b = objectBody(body, 'time entry');
  const errors = new FieldErrors('timeEntry');

  let member: CwRecord | undefined;
  if (b.member == null) errors.required('member');
  else if (!(member = resolveRef(inst, 'members', b.member))) errors.invalid('member', 'Member not found.');
  else if (member.inactiveFlag) errors.invalid('member', `Member ${member.identifier} is inactive.`);

  if (b.chargeToType == null) errors.required('chargeToType');
  else if (!(CHARGE_TO_TYPES as readonly string[]).includes(b.chargeToType)) errors.invalid('chargeToType', `chargeToType must be one of ${CHARGE_TO_TYPES.join(', ')}.`);

  let ticket: CwRecord | undefined;
  let ticketTable: 'tickets' | 'project_tickets' | undefined;
  if (b.chargeToId == null) errors.required('chargeToId');
  else if (b.chargeToType === 'ServiceTicket' || b.chargeToType === 'ProjectTicket') {
    ticketTable = b.chargeToType === 'ServiceTicket' ? 'tickets' : 'project_tickets';
    ticket = inst.table(ticketTable).get(Number(b.chargeToId));
    if (!ticket) errors.invalid('chargeToId', `${b.chargeToType} ${b.chargeToId} not found.`);
  }

  const start = isoOrNull(b.timeStart);
  if (b.timeStart == null) errors.required('timeStart');
  else if (start == null) errors.invalid('timeStart', 'timeStart must be a date and time.');
  const end = isoOrNull(b.timeEnd);
  if (b.timeEnd != null && end == null) errors.invalid('timeEnd', 'timeEnd must be a date and time.');
  let hours: number | undefined;
  if (b.actualHours != null) {
    if (typeof b.actualHours !== 'number' || !(b.actualHours > 0) || b.actualHours > 24) errors.invalid('actualHours', 'actualHours must be above 0 and at most 24.');
    else hours = b.actualHours;
  } else if (end != null && start != null) {
    if (end <= start) errors.invalid('timeEnd', 'timeEnd must be after timeStart.');
    else hours = Math.round(((end - start) / 3_600_000) * 100) / 100;
  } else if (b.timeEnd == null) {
    errors.required('actualHours');
  }
  const billableOption = b.billableOption ?? 'Billable';
  if (!(BILLABLE_OPTIONS as readonly string[]).includes(billableOption)) errors.invalid('billableOption', `billableOption must be one of ${BILLABLE_OPTIONS.join(', ')}.`);
  errors.throwIfAny();

  const timeEnd = end != null ? new Date(end) : new Date(start! + hours! * 3_600_000);
  const company = ticket?.company ? inst.table('companies').get(ticket.company.id) : undefined;
  const entry = compact({
    id: inst.nextId('time_entries'),
    company: company ? companyRef(company) : undefined,
    companyType: company ? 'Client' : undefined,
    chargeToId: Number(b.chargeToId),
    chargeToType: b.chargeToType,
    member: memberRef(member!),
    timeStart: cwTime(new Date(start!)),
    timeEnd: cwTime(timeEnd),
    hoursDeduct: 0,
    actualHours: hours,
    billableOption,
    notes: typeof b.notes === 'string' ? b.notes : undefined,
    internalNotes: typeof b.internalNotes === 'string' ? b.internalNotes : undefined,
    addToDetailDescriptionFlag: b.addToDetailDescriptionFlag === true,
    addToInternalAnalysisFlag: b.addToInternalAnalysisFlag === true,
    addToResolutionFlag: b.addToResolutionFlag === true,
    hoursBilled: billableOption === 'Billable' ? hours : 0,
    enteredBy: change.by,
    dateEntered: cwTime(change.at),
    ticket: ticket && ticketTable === 'tickets' ? ticketRef(ticket) : undefined,
    status: 'Open',
    _info: newInfo(change),
  });
  inst.insert('time_entries', entry);
  if (ticket) {
    // Time on a ticket adds to its actual hours: a change to the ticket.
    ticket.actualHours = Math.round(((ticket.actualHours ?? 0) + hours!) * 100) / 100;
    touch(ticket, change);
  }
  return entry;
}

/** POST /project/projects/{id}/notes: text required. */
export function addProjectNote(inst: Instance, projectId: number, body: unknown, change: Change): CwRecord {
  const project = inst.table('projects').get(projectId);
  if (!project) throw notFound('Project', projectId);
  const b = objectBody(body, 'project note');
  const errors = new FieldErrors('projectNote');
  if (typeof b.text !== 'string' || !b.text.trim()) errors.required('text');
  errors.throwIfAny();
  const note = {
    id: inst.nextId('project_notes'),
    projectId,
    text: b.text,
    type: { id: 1, name: 'Discussion' },
    flagged: b.flagged === true,
    enteredBy: change.by,
    _info: newInfo(change),
  };
  inst.insert('project_notes', note);
  touch(project, change);
  return note;
}

/** POST /project/tickets: summary (max 100) and phase required; project, board and company follow the phase. */
export function createProjectTicket(inst: Instance, body: unknown, change: Change): CwRecord {
  const b = objectBody(body, 'project ticket');
  const errors = new FieldErrors('ticket');
  if (b.summary == null || (typeof b.summary === 'string' && !b.summary.trim())) errors.required('summary');
  else if (typeof b.summary !== 'string' || b.summary.length > 100) errors.invalid('summary', 'summary may not exceed 100 characters.');

  let phase: CwRecord | undefined;
  let project: CwRecord | undefined;
  if (b.phase == null) errors.required('phase');
  else if (!(phase = resolveRef(inst, 'project_phases', b.phase))) errors.invalid('phase', 'Phase not found.');
  else {
    project = inst.table('projects').get(phase.projectId);
    if (b.project != null && resolveRef(inst, 'projects', b.project)?.id !== project?.id) errors.invalid('project', 'The phase does not belong to this project.');
  }
  const board = project?.board ? inst.table('boards').get(project.board.id) : undefined;
  if (project && !board) errors.invalid('phase', 'The project has no board.');
  const status = board ? (b.status != null ? resolveRef(inst, 'statuses', b.status) : defaultStatus(inst, board.id)) : undefined;
  if (board && (!status || status.board?.id !== board.id)) errors.invalid('status', 'Status not found on the project board.');
  const priority = b.priority == null ? defaultPriority(inst) : resolveRef(inst, 'priorities', b.priority);
  if (!priority) errors.invalid('priority', 'Priority not found.');
  errors.throwIfAny();

  const company = inst.table('companies').get(project!.company.id);
  const t: CwRecord = compact({
    id: inst.nextId('project_tickets'),
    summary: b.summary,
    recordType: 'ProjectTicket',
    board: boardRef(board!),
    company: company ? companyRef(company) : project!.company,
    project: projectRef(project!),
    phase: phaseRef(phase!),
    priority: priorityRef(priority!),
    // No externalXRef: ProjectTicket does not have one (pyconnectwise ProjectTicket model, connectwise-rest
    // ManageTypes), so ConnectWise drops it like any other field outside the schema.
    budgetHours: typeof b.budgetHours === 'number' ? b.budgetHours : undefined,
    closedFlag: false,
    actualHours: 0,
    billTime: 'Billable',
    _info: newInfo(change),
  });
  applyStatus(t, status!, change);
  inst.insert('project_tickets', t);
  // initialDescription & co. are write-only: ConnectWise stores them as the ticket's first notes.
  const initial: [string, CwRecord][] = [
    ['initialDescription', { detailDescriptionFlag: true }],
    ['initialInternalAnalysis', { internalAnalysisFlag: true }],
    ['initialResolution', { resolutionFlag: true }],
  ];
  for (const [field, flags] of initial) {
    if (typeof b[field] === 'string' && b[field].trim()) insertProjectTicketNote(inst, t, { text: b[field], ...flags }, change);
  }
  return t;
}

function insertProjectTicketNote(inst: Instance, ticket: CwRecord, b: CwRecord, change: Change): CwRecord {
  const flags = {
    detailDescriptionFlag: b.detailDescriptionFlag === true,
    internalAnalysisFlag: b.internalAnalysisFlag === true,
    resolutionFlag: b.resolutionFlag === true,
  };
  if (!flags.detailDescriptionFlag && !flags.internalAnalysisFlag && !flags.resolutionFlag) flags.detailDescriptionFlag = true;
  const note = compact({
    id: inst.nextId('project_ticket_notes'),
    ticketId: ticket.id,
    text: b.text,
    ...flags,
    issueFlag: false,
    _info: newInfo(change),
  });
  inst.insert('project_ticket_notes', note);
  return note;
}

/** POST /project/tickets/{id}/notes: text required; adding a note is a change to the ticket. */
export function addProjectTicketNote(inst: Instance, ticketId: number, body: unknown, change: Change): CwRecord {
  const ticket = inst.table('project_tickets').get(ticketId);
  if (!ticket) throw notFound('Ticket', ticketId);
  const b = objectBody(body, 'note');
  const errors = new FieldErrors('projectTicketNote');
  if (typeof b.text !== 'string' || !b.text.trim()) errors.required('text');
  errors.throwIfAny();
  const note = insertProjectTicketNote(inst, ticket, b, change);
  touch(ticket, change);
  return note;
}
