/**
 * Autotask's write rules for the entities our service writes: Tickets (create, update), TicketNotes
 * (create) and TimeEntries (create). Refusals are `AutotaskError(500, [...])`: the Autotask REST API
 * answers most validation failures with HTTP 500 and `{"errors": ["..."]}` (seen in client issue
 * trackers, e.g. "When assigning a Resource, you must assign both a assignedResourceID and
 * assignedResourceRoleID."), so a write connector must read a 500 with an `errors` body as a refusal,
 * not as an outage. A refused write changes nothing.
 */
import type { EntityName, FieldInfo } from './fields';
import { AutotaskError, type InstanceState, type Row } from './store';

export interface WriteContext {
  state: InstanceState;
  now: () => Date;
  /** The resource the caller impersonates (ImpersonationResourceId header), if any. */
  impersonatedResourceId: number | null;
  requireTicketNoteTitles: boolean;
}

const COMPLETE_STATUS = 5;

/** Checks and converts the writable fields present in `body`; collects every problem before refusing. */
export function readFields(
  state: InstanceState,
  entity: EntityName,
  body: Record<string, unknown>,
  mode: 'create' | 'update',
  errors: string[],
  requiredOverride: (f: FieldInfo) => boolean = (f) => f.isRequired,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const seen = new Set<string>();
  for (const [key, raw] of Object.entries(body)) {
    const f = state.field(entity, key);
    // Unknown properties are ignored, as Autotask's model binding does; read-only ones too.
    if (!f || f.isReadOnly) continue;
    seen.add(f.name);
    const value = convert(f, raw, errors);
    if (value === undefined) continue;
    if (value === null && requiredOverride(f)) {
      errors.push(`${f.name} is required.`);
      continue;
    }
    out[f.name] = value;
  }
  if (mode === 'create') {
    for (const f of state.fields(entity)) {
      if (f.isReadOnly || !requiredOverride(f) || seen.has(f.name)) continue;
      errors.push(`${f.name} is required.`);
    }
  }
  return out;
}

/** The value in the field's type, null for "clear", or undefined after recording an error. */
function convert(f: FieldInfo, raw: unknown, errors: string[]): unknown {
  if (raw === null || raw === undefined) return null;
  switch (f.dataType) {
    case 'string': {
      if (typeof raw !== 'string') {
        errors.push(`${f.name} must be a string.`);
        return undefined;
      }
      if (raw.trim() === '') return null;
      if (f.length > 0 && raw.length > f.length) {
        errors.push(`${f.name} exceeds the maximum length of ${f.length} characters.`);
        return undefined;
      }
      return raw;
    }
    case 'integer':
    case 'long': {
      // Autotask's JSON binding accepts numbers given as strings ("5").
      const n = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
      if (typeof n !== 'number' || !Number.isInteger(n)) {
        errors.push(`${f.name} must be an integer.`);
        return undefined;
      }
      if (f.isPickList && !(f.picklistValues ?? []).some((p) => p.isActive && p.value === String(n))) {
        errors.push(`The value ${n} is not a valid picklist value for ${f.name}.`);
        return undefined;
      }
      return n;
    }
    case 'double':
    case 'decimal': {
      const n = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : raw;
      if (typeof n !== 'number' || !Number.isFinite(n)) {
        errors.push(`${f.name} must be a number.`);
        return undefined;
      }
      return n;
    }
    case 'boolean': {
      if (typeof raw !== 'boolean') {
        errors.push(`${f.name} must be true or false.`);
        return undefined;
      }
      return raw;
    }
    case 'datetime': {
      const iso = toIsoTime(raw);
      if (!iso) {
        errors.push(`${f.name} is not a valid date and time.`);
        return undefined;
      }
      return iso;
    }
  }
  return raw;
}

/** Autotask stores UTC; a date without a time is midnight UTC. */
export function toIsoTime(raw: unknown): string | null {
  if (typeof raw !== 'string' || !raw.trim()) return null;
  const s = /^\d{4}-\d{2}-\d{2}$/.test(raw) ? `${raw}T00:00:00Z` : /T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(raw) ? `${raw}Z` : raw;
  const t = Date.parse(s);
  return Number.isNaN(t) ? null : new Date(t).toISOString();
}

export function refuse(errors: string[]): void {
  if (errors.length) throw new AutotaskError(500, errors);
}

/** Reference checks shared by ticket create and update, on the ticket as it would be after the write. */
function checkTicketReferences(ctx: WriteContext, next: Record<string, unknown>, changed: Record<string, unknown>, errors: string[]): void {
  const { state } = ctx;
  if ('companyID' in changed && !state.table('Companies').get(next.companyID as number)) {
    errors.push(`companyID ${String(next.companyID)} does not reference an existing company.`);
  }
  if (('contactID' in changed || 'companyID' in changed) && next.contactID != null) {
    const contact = state.table('Contacts').get(next.contactID as number);
    if (!contact) errors.push(`contactID ${String(next.contactID)} does not reference an existing contact.`);
    else if (contact.companyID !== next.companyID) errors.push('The contact must belong to the ticket\'s company.');
  }
  if ('projectID' in changed && next.projectID != null && !state.table('Projects').get(next.projectID as number)) {
    errors.push(`projectID ${String(next.projectID)} does not reference an existing project.`);
  }
  if ('contractID' in changed && next.contractID != null) {
    const contract = state.table('Contracts').get(next.contractID as number);
    if (!contract) errors.push(`contractID ${String(next.contractID)} does not reference an existing contract.`);
    else if (contract.companyID !== next.companyID) errors.push('The contract must belong to the ticket\'s company.');
  }
  if ('assignedResourceID' in changed || 'assignedResourceRoleID' in changed) {
    const hasResource = next.assignedResourceID != null;
    const hasRole = next.assignedResourceRoleID != null;
    if (hasResource !== hasRole) {
      errors.push('When assigning a Resource, you must assign both a assignedResourceID and assignedResourceRoleID.');
    } else if (hasResource) {
      const r = state.table('Resources').get(next.assignedResourceID as number);
      if (!r || r.isActive !== true) errors.push(`assignedResourceID ${String(next.assignedResourceID)} is not an active resource.`);
      if (!state.table('Roles').get(next.assignedResourceRoleID as number)) errors.push(`assignedResourceRoleID ${String(next.assignedResourceRoleID)} is not a role.`);
    }
  }
}

export function createTicket(ctx: WriteContext, body: Record<string, unknown>): Row {
  const { state } = ctx;
  const errors: string[] = [];
  const values = readFields(state, 'Tickets', body, 'create', errors);
  refuse(errors);
  const at = ctx.now();
  const stamp = at.toISOString();
  const defaults: Record<string, unknown> = {};
  for (const name of ['ticketType', 'ticketCategory', 'source']) {
    const d = state.field('Tickets', name)?.picklistValues?.find((p) => p.isDefaultValue);
    if (d) defaults[name] = Number(d.value);
  }
  const draft: Record<string, unknown> = { ...defaults, ...values };
  checkTicketReferences(ctx, draft, draft, errors);
  refuse(errors);
  const row = state.normalize('Tickets', {
    ...draft,
    id: state.table('Tickets').nextId(),
    ticketNumber: state.nextTicketNumber(at),
    createDate: stamp,
    creatorResourceID: ctx.impersonatedResourceId,
    creatorType: 1,
    lastActivityDate: stamp,
    lastActivityResourceID: ctx.impersonatedResourceId,
    lastActivityPersonType: 1,
    completedDate: draft.status === COMPLETE_STATUS ? stamp : null,
    completedByResourceID: draft.status === COMPLETE_STATUS ? ctx.impersonatedResourceId : null,
  });
  state.table('Tickets').insert(row);
  return row;
}

export function updateTicket(ctx: WriteContext, body: Record<string, unknown>): Row {
  const { state } = ctx;
  const id = Number(body.id ?? body.Id ?? body.ID);
  if (!Number.isInteger(id)) throw new AutotaskError(500, ['id is required to update a Tickets entity.']);
  const ticket = state.table('Tickets').get(id);
  if (!ticket) throw new AutotaskError(500, [`Tickets with id ${id} was not found.`]);
  const errors: string[] = [];
  const changed = readFields(state, 'Tickets', body, 'update', errors);
  refuse(errors);
  const next = { ...ticket, ...changed };
  checkTicketReferences(ctx, next, changed, errors);
  refuse(errors);
  applyTicketChange(ticket, changed, ctx.now().toISOString(), ctx.impersonatedResourceId);
  return ticket;
}

/** Applies a change and the bookkeeping Autotask does with it (activity time, completion). */
export function applyTicketChange(ticket: Row, changed: Record<string, unknown>, stamp: string, resourceId: number | null): void {
  const wasComplete = ticket.status === COMPLETE_STATUS;
  Object.assign(ticket, changed);
  const isComplete = ticket.status === COMPLETE_STATUS;
  if (isComplete && !wasComplete) {
    ticket.completedDate = stamp;
    ticket.completedByResourceID = resourceId;
  } else if (!isComplete && wasComplete) {
    ticket.completedDate = null;
    ticket.completedByResourceID = null;
  }
  ticket.lastActivityDate = stamp;
  ticket.lastActivityResourceID = resourceId;
}

export function createTicketNote(ctx: WriteContext, body: Record<string, unknown>, parentTicketId?: number): Row {
  const { state } = ctx;
  const errors: string[] = [];
  const input = { ...body };
  if (parentTicketId != null) {
    const given = input.ticketID ?? input.TicketID;
    if (given != null && Number(given) !== parentTicketId) throw new AutotaskError(500, ['ticketID does not match the parent ticket of the URL.']);
    input.ticketID = parentTicketId;
  }
  // Ticket note titles are required unless the ticket category turns "Require titles on ticket notes" off.
  const required = (f: FieldInfo) => (f.name === 'title' ? ctx.requireTicketNoteTitles : f.isRequired);
  const values = readFields(state, 'TicketNotes', input, 'create', errors, required);
  refuse(errors);
  const ticket = state.table('Tickets').get(values.ticketID as number);
  if (!ticket) throw new AutotaskError(500, [`ticketID ${String(values.ticketID)} does not reference an existing ticket.`]);
  const stamp = ctx.now().toISOString();
  const row = state.normalize('TicketNotes', {
    ...values,
    id: state.table('TicketNotes').nextId(),
    createDateTime: stamp,
    lastActivityDate: stamp,
    creatorResourceID: ctx.impersonatedResourceId,
    impersonatorCreatorResourceID: null,
  });
  state.table('TicketNotes').insert(row);
  ticket.lastActivityDate = stamp;
  ticket.lastActivityResourceID = ctx.impersonatedResourceId;
  return row;
}

const MAX_HOURS = 24;

export function createTimeEntry(ctx: WriteContext, body: Record<string, unknown>): Row {
  const { state } = ctx;
  const errors: string[] = [];
  const values = readFields(state, 'TimeEntries', body, 'create', errors);
  refuse(errors);

  const resource = state.table('Resources').get(values.resourceID as number);
  if (!resource) errors.push(`resourceID ${String(values.resourceID)} does not reference an existing resource.`);
  else if (resource.isActive !== true) errors.push(`The resource ${String(values.resourceID)} is inactive; time cannot be entered for it.`);

  // Hours come from hoursWorked, or from startDateTime/endDateTime when both are given.
  let hours = values.hoursWorked as number | undefined;
  if (hours == null && values.startDateTime && values.endDateTime) {
    hours = Math.round(((Date.parse(values.endDateTime as string) - Date.parse(values.startDateTime as string)) / 3_600_000) * 100) / 100;
  }
  if (hours == null) errors.push('hoursWorked is required (or startDateTime and endDateTime).');
  else if (!(hours > 0 && hours <= MAX_HOURS)) errors.push('hoursWorked must be greater than 0 and less than or equal to 24.');

  // Ticket and task time need their ticket or task; the sandbox has no regular (internal) time.
  const hasTicket = values.ticketID != null;
  const hasTask = values.taskID != null;
  if (hasTicket && hasTask) errors.push('A time entry can reference a ticket or a task, not both.');
  else if (!hasTicket && !hasTask) errors.push('ticketID or taskID is required.');
  else if (hasTask) errors.push(`taskID ${String(values.taskID)} does not reference an existing task.`);
  const ticket = hasTicket ? state.table('Tickets').get(values.ticketID as number) : undefined;
  if (hasTicket && !ticket) errors.push(`ticketID ${String(values.ticketID)} does not reference an existing ticket.`);

  // Ticket and task time is entered in a role (it prices the work).
  if (values.roleID == null) errors.push('roleID is required for ticket and task time entries.');
  else if (!state.table('Roles').get(values.roleID as number)) errors.push(`roleID ${String(values.roleID)} does not reference an existing role.`);
  if (values.billingCodeID != null) {
    const code = state.table('BillingCodes').get(values.billingCodeID as number);
    if (!code || code.isActive !== true) errors.push(`billingCodeID ${String(values.billingCodeID)} is not an active work type.`);
  }
  if (values.startDateTime && values.endDateTime && Date.parse(values.endDateTime as string) <= Date.parse(values.startDateTime as string)) {
    errors.push('endDateTime must be after startDateTime.');
  }
  refuse(errors);

  const stamp = ctx.now().toISOString();
  const isNonBillable = values.isNonBillable === true;
  const row = state.normalize('TimeEntries', {
    ...values,
    id: state.table('TimeEntries').nextId(),
    hoursWorked: hours,
    hoursToBill: isNonBillable ? 0 : hours,
    isNonBillable,
    showOnInvoice: values.showOnInvoice ?? !isNonBillable,
    timeEntryType: 2,
    createDateTime: stamp,
    lastModifiedDateTime: stamp,
    creatorUserID: ctx.impersonatedResourceId,
  });
  state.table('TimeEntries').insert(row);
  if (ticket) {
    ticket.lastActivityDate = stamp;
    ticket.lastActivityResourceID = values.resourceID ?? null;
  }
  return row;
}
