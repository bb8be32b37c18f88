/**
 * The writes the BMS simulator takes, each checked against its input schema (./schema.ts) and then
 * against the instance (ids that name nothing, a location of another account, a ticket already
 * completed), refused in the envelope as BMS does. Every change stamps `ModifiedOn` and, on a ticket,
 * `LastActivityUpdate` (the ticket list's change filter).
 */
import { invalid } from './envelope';
import { checkBody, memberProblem } from './schema';
import { type BmsInstance, type BmsRecord, type BmsResource } from './store';

/** A status whose TypeId is this is a completed one (the sandbox's basic status "Completed"). */
export const COMPLETED_STATUS_TYPE = 3;


function named(inst: BmsInstance, resource: BmsResource, id: unknown, what: string, optional = false): BmsRecord | null {
  if (id === undefined || id === null) {
    if (optional) return null;
    throw invalid(`The ${what} field is required.`);
  }
  const rec = inst.get(resource, id);
  if (!rec) throw invalid(`${what} ${String(id)} does not exist.`);
  return rec;
}

function employeeOf(inst: BmsInstance, user: string): BmsRecord | undefined {
  return inst.table('employees').find((e) => e.UserName === user);
}

/** The names a ticket answer carries beside its ids, from the instance's lookups. */
function withNames(inst: BmsInstance, t: BmsRecord): BmsRecord {
  const status = inst.get('statuses', t.StatusId);
  const account = inst.get('accounts', t.AccountId);
  const location = (account?.Locations ?? []).find((l: BmsRecord) => l.Id === t.LocationId);
  const contact = t.ContactId ? inst.get('contacts', t.ContactId) : undefined;
  Object.assign(t, {
    StatusName: status?.Name ?? null, StatusOrder: status?.StatusOrder ?? 0,
    PriorityName: inst.get('priorities', t.PriorityId)?.Name ?? null,
    QueueName: t.QueueId ? inst.get('queues', t.QueueId)?.Name ?? null : null,
    AssigneeName: t.AssigneeId ? inst.get('employees', t.AssigneeId)?.Name ?? null : null,
    AccountName: account?.AccountName ?? null, AccountCode: account?.AccountCode ?? null,
    LocationName: location?.LocationName ?? null,
    ContactName: contact ? `${contact.FirstName ?? ''} ${contact.LastName ?? ''}`.trim() : null,
    TypeName: inst.get('tickettypes', t.TypeId)?.Name ?? null, SourceName: inst.get('sources', t.SourceId)?.Name ?? null,
  });
  return t;
}

function checkTicketRefs(inst: BmsInstance, t: BmsRecord): void {
  const account = named(inst, 'accounts', t.AccountId, 'Account')!;
  if (!(account.Locations ?? []).some((l: BmsRecord) => l.Id === t.LocationId)) throw invalid(`Location ${t.LocationId} does not belong to account ${t.AccountId}.`);
  named(inst, 'statuses', t.StatusId, 'Status');
  named(inst, 'priorities', t.PriorityId, 'Priority');
  named(inst, 'tickettypes', t.TypeId, 'Ticket type');
  named(inst, 'sources', t.SourceId, 'Source');
  named(inst, 'queues', t.QueueId, 'Queue', true);
  named(inst, 'employees', t.AssigneeId, 'Assignee', true);
  const contact = named(inst, 'contacts', t.ContactId, 'Contact', true);
  if (contact && contact.AccountId !== t.AccountId) throw invalid(`Contact ${t.ContactId} does not belong to account ${t.AccountId}.`);
  named(inst, 'contracts', t.ContractId, 'Contract', true);
}

function completes(inst: BmsInstance, statusId: unknown): boolean {
  return inst.get('statuses', statusId)?.TypeId === COMPLETED_STATUS_TYPE;
}

/** Moves the ticket's stamps after any change; a move into (or out of) a completed status sets (or clears) CompletedDate. */
function touch(inst: BmsInstance, t: BmsRecord, statusBefore: unknown): void {
  const at = inst.stamp();
  t.ModifiedOn = at;
  t.LastActivityUpdate = at;
  if (t.StatusId !== statusBefore) {
    t.LastStatusUpdate = at;
    t.CompletedDate = completes(inst, t.StatusId) ? at : null;
  }
  withNames(inst, t);
}

/** POST /v2/servicedesk/tickets (TicketInputDto). */
export function createTicket(inst: BmsInstance, body: unknown, user: string): BmsRecord {
  checkBody('POST', '/v2/servicedesk/tickets', body);
  const b = body as BmsRecord;
  checkTicketRefs(inst, b);
  const id = inst.nextId('tickets');
  const at = inst.stamp();
  const { SecondaryAssignees, Ccs, TempAttachments, CustomFieldsData, UseDefaultContract, ...fields } = b;
  void Ccs; void TempAttachments; void CustomFieldsData; void UseDefaultContract;
  const t: BmsRecord = {
    ...fields, Id: id, TicketNumber: `T${String(20260000 + id)}`, CreatedBy: employeeOf(inst, user)?.Id ?? null, CreatedOn: at, ModifiedOn: at,
    LastActivityUpdate: at, LastStatusUpdate: at, CompletedDate: completes(inst, b.StatusId) ? at : null, SecondaryAssignees: SecondaryAssignees ?? [],
    TenantId: 1, IsScheduled: 0, HasPostedEntries: false, IsReadOnly: false, OpenDateLocked: false, CCs: [],
  };
  inst.insert('tickets', withNames(inst, t));
  return t;
}

/** The TicketInputDto members a JSON Patch may replace on PATCH /v2/servicedesk/tickets/{ticketId}. */
const PATCHABLE = new Set(['Title', 'Details', 'StatusId', 'PriorityId', 'QueueId', 'AssigneeId', 'ContactId', 'DueDate', 'IssueTypeId', 'SubIssueTypeId', 'TypeId', 'WorkTypeId']);

/** PATCH /v2/servicedesk/tickets/{ticketId}: a JSON Patch document (`op` replace, `path` /Member, `value`). */
export function patchTicket(inst: BmsInstance, t: BmsRecord, body: unknown): BmsRecord {
  checkBody('PATCH', '/v2/servicedesk/tickets/{ticketId}', body);
  const ops = body as BmsRecord[];
  if (ops.length === 0) throw invalid('The patch document is empty.');
  const next = { ...t };
  for (const o of ops) {
    const member = typeof o.path === 'string' ? o.path.replace(/^\//, '') : '';
    if (o.op !== 'replace') throw invalid(`The operation '${String(o.op)}' is not supported.`);
    if (!PATCHABLE.has(member)) throw invalid(`The target location specified by path segment '${member}' was not found.`);
    // The value is bound to the TicketInputDto member it replaces, with the member's type and range.
    const problem = memberProblem('TicketInputDto', member, o.value);
    if (problem) throw invalid('One or more validation errors occurred.', [problem]);
    next[member] = o.value;
  }
  if (typeof next.Title !== 'string' || !next.Title.trim()) throw invalid('The Title field is required.');
  checkTicketRefs(inst, next);
  const before = t.StatusId;
  Object.assign(t, next);
  touch(inst, t, before);
  return t;
}

/** POST /v2/servicedesk/tickets/{ticketId}/resolve (ResolveTicketDto): the comment as a note, the ticket completed. */
export function resolveTicket(inst: BmsInstance, t: BmsRecord, body: unknown, user: string): BmsRecord {
  checkBody('POST', '/v2/servicedesk/tickets/{ticketId}/resolve', body);
  const b = body as BmsRecord;
  const status = b.StatusId ?? inst.table('statuses').find((s) => s.TypeId === COMPLETED_STATUS_TYPE)?.Id;
  if (!completes(inst, status)) throw invalid(`Status ${String(status)} is not a completed status.`);
  addNote(inst, t, { Details: b.Comment, IsInternal: b.IsInternal ?? false, TypeId: 1, NoteDate: inst.stamp() }, user);
  const before = t.StatusId;
  t.StatusId = status;
  touch(inst, t, before);
  return t;
}

/** POST /v2/servicedesk/tickets/{ticketId}/notes (TicketNotePostInputDto). */
export function addNote(inst: BmsInstance, t: BmsRecord, body: unknown, user: string): BmsRecord {
  checkBody('POST', '/v2/servicedesk/tickets/{ticketId}/notes', body);
  const b = body as BmsRecord;
  if (b.StatusId != null) named(inst, 'statuses', b.StatusId, 'Status');
  const author = employeeOf(inst, user);
  const at = inst.stamp();
  const note: BmsRecord = {
    Id: inst.nextId('notes'), TicketId: t.Id, CreatedBy: author?.Id ?? null, CreatedOn: at, ModifiedOn: at, Details: b.Details,
    IsInternal: b.IsInternal, TypeId: b.TypeId, TypeName: b.TypeId === 1 ? 'General' : null, CreatedByName: author?.Name ?? user, Attachments: [],
  };
  inst.insert('notes', note);
  const before = t.StatusId;
  if (b.StatusId != null) t.StatusId = b.StatusId;
  touch(inst, t, before);
  return note;
}

const seconds = (span: string) => { const [h, m, sec = 0] = span.split(':').map(Number); return h * 3600 + m * 60 + sec; };

/** POST /v2/servicedesk/tickets/{ticketId}/timelogs (TicketTimeEntryInputDto): the span must end after it starts. */
export function addTimeLog(inst: BmsInstance, t: BmsRecord, body: unknown, user: string): BmsRecord {
  checkBody('POST', '/v2/servicedesk/tickets/{ticketId}/timelogs', body);
  const b = body as BmsRecord;
  named(inst, 'worktypes', b.WorkTypeId, 'Work type');
  named(inst, 'roles', b.RoleId, 'Role');
  const who = b.UserId != null ? named(inst, 'employees', b.UserId, 'User') : employeeOf(inst, user);
  const spent = seconds(b.EndTime) - seconds(b.StartTime);
  if (spent <= 0) throw invalid('The end time must be later than the start time.');
  const at = inst.stamp();
  const entry: BmsRecord = {
    Id: inst.nextId('timelogs'), TicketId: t.Id, CreatedOn: at, ModifiedOn: at, StartDate: `${String(b.StartDate).slice(0, 10)}T00:00:00`,
    StartTime: b.StartTime, EndTime: b.EndTime, Timespent: b.Timespent ?? Math.round((spent / 3600) * 100) / 100, Notes: b.Notes ?? null,
    InternalNotes: b.InternalNotes ?? null, UserId: who?.Id ?? 0, EmployeeName: who?.Name ?? null, Approved: false, Billed: false, Posted: false,
    WorkTypeId: b.WorkTypeId, RoleId: b.RoleId, WorkTypeName: inst.get('worktypes', b.WorkTypeId)?.Name ?? null, RoleName: inst.get('roles', b.RoleId)?.Name ?? null,
  };
  inst.insert('timelogs', entry);
  touch(inst, t, t.StatusId);
  return entry;
}

/** POST /v2/finance/contracts/recurringservices/{contractId}/services (an array of RecurringServicePostInputDto); answers the first line. */
export function addRecurringServices(inst: BmsInstance, contract: BmsRecord, body: unknown, user: string): BmsRecord {
  checkBody('POST', '/v2/finance/contracts/recurringservices/{contractId}/services', body);
  const lines = body as BmsRecord[];
  if (lines.length === 0) throw invalid('At least one service is required.');
  if (contract.ContractType !== 'Recurring Services') throw invalid(`Contract ${contract.Id} is not a recurring services contract.`);
  if (contract.Status !== 'Active') throw invalid(`Contract ${contract.Id} is not active.`);
  const created = lines.map((b) => {
    const service = named(inst, 'services', b.ServiceId, 'Service')!;
    if (!(b.Units > 0)) throw invalid('Units must be greater than 0.');
    if (b.UnitPrice < 0 || b.UnitCost < 0) throw invalid('Unit price and unit cost cannot be negative.');
    return { b, service };
  }).map(({ b, service }) => {
    const at = inst.stamp();
    const line: BmsRecord = {
      Id: inst.nextId('recurring_services'), CreatedBy: employeeOf(inst, user)?.Id ?? null, CreatedOn: at, ModifiedOn: at, ServiceId: service.Id,
      ServiceName: b.ServiceName ?? service.Name, Description: b.ServiceDescription ?? service.Description ?? null, ContractId: contract.Id,
      ContractName: contract.ContractName, Units: b.Units, UnitCost: b.UnitCost, UnitPrice: b.UnitPrice, TotalCost: b.Units * b.UnitCost,
      TotalPrice: b.Units * b.UnitPrice, Margin: b.Units * (b.UnitPrice - b.UnitCost), OriginalUnitPrice: b.UnitPrice, OriginalUnitCost: b.UnitCost,
      EffectiveDate: b.EffectiveDate, SortOrder: b.SortOrder ?? 0,
    };
    return inst.insert('recurring_services', line);
  });
  return created[0];
}

/** A change the MSP makes in BMS's UI (the sandbox trigger): the same stamps an API write moves. */
export function applyUiChange(inst: BmsInstance, resource: BmsResource, rec: BmsRecord, patch: BmsRecord): BmsRecord {
  const before = rec.StatusId;
  Object.assign(rec, patch);
  if (resource === 'tickets') touch(inst, rec, before);
  else rec.ModifiedOn = inst.stamp();
  return rec;
}
