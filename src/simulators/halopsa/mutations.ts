/**
 * The changes a Halo instance can undergo, shared by the HTTP routes (an integration writing) and the
 * programmatic API (the MSP editing in Halo's UI). Every change stamps the record's last-updated field.
 */
import { badRequest, notFound } from './errors';
import {
  HALO_CLOSED_STATUS_ID, LAST_UPDATE_FIELD, clone, haloTime, parseHaloTime,
  type HaloInstance, type HaloRecord, type HaloResource,
} from './store';

export type FaultResource = 'tickets' | 'projects';

/** Fields Halo fills itself on a ticket; a caller cannot set them. */
const MANAGED_FAULT_FIELDS = new Set([
  'id', 'dateoccurred', 'last_update', 'lastactiondate', 'client_name', 'site_name', 'user_name', 'dateclosed', 'is_project',
]);

function positiveInt(value: unknown): number | null {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof n === 'number' && Number.isInteger(n) && n > 0 ? n : null;
}

function requireStatus(inst: HaloInstance, value: unknown): number {
  const id = typeof value === 'number' ? value : Number(value);
  if (!inst.table('statuses').get(id)) throw badRequest(`Status ${String(value)} does not exist`);
  return id;
}

function requirePriority(inst: HaloInstance, value: unknown): number {
  const id = Number(value);
  if (!inst.table('priorities').rows.some((p) => p.priorityid === id)) throw badRequest(`Priority ${String(value)} does not exist`);
  return id;
}

function requireClient(inst: HaloInstance, value: unknown): HaloRecord {
  const id = positiveInt(value);
  const client = id != null ? inst.table('clients').get(id) : undefined;
  if (!client) throw badRequest(`Client ${String(value)} does not exist`);
  return client;
}

/** Keeps the denormalised names and the closed date in step with the ids a change touched. */
function applyFaultChange(inst: HaloInstance, rec: HaloRecord, patch: HaloRecord, now: string): void {
  if ('status_id' in patch) patch.status_id = requireStatus(inst, patch.status_id);
  if ('priority_id' in patch) patch.priority_id = requirePriority(inst, patch.priority_id);
  const client = 'client_id' in patch ? requireClient(inst, patch.client_id) : undefined;
  const wasClosed = rec.status_id === HALO_CLOSED_STATUS_ID;

  for (const [k, v] of Object.entries(patch)) if (!MANAGED_FAULT_FIELDS.has(k) && k !== 'team_id') rec[k] = clone(v);

  if (client) {
    rec.client_id = client.id;
    rec.client_name = client.name;
    rec.site_id = client.main_site_id ?? 0;
    rec.site_name = client.main_site_name ?? '';
  }
  if ('user_id' in patch) {
    const user = inst.table('users').get(Number(patch.user_id));
    rec.user_id = user ? user.id : 0;
    rec.user_name = user ? user.name : '';
  }
  if ('team_id' in patch) {
    const team = inst.table('teams').get(Number(patch.team_id));
    if (!team) throw badRequest(`Team ${String(patch.team_id)} does not exist`);
    rec.team = team.name;
  }
  const isClosed = rec.status_id === HALO_CLOSED_STATUS_ID;
  if (isClosed && !wasClosed) rec.dateclosed = now;
  if (!isClosed && wasClosed) rec.dateclosed = null;
  rec.last_update = now;
}

/** What a create needs: a summary and an existing client. */
export function validateFaultCreate(inst: HaloInstance, body: HaloRecord): void {
  if (typeof body.summary !== 'string' || body.summary.trim() === '') throw badRequest('Summary is required');
  requireClient(inst, body.client_id);
}

/** A new ticket or project, as POST /api/Tickets (an element without id) makes it. */
export function createFault(inst: HaloInstance, resource: FaultResource, body: HaloRecord, at: Date): HaloRecord {
  validateFaultCreate(inst, body);
  const now = haloTime(at);
  const rec: HaloRecord = {
    id: inst.nextId(resource),
    dateoccurred: now,
    summary: body.summary,
    details: '',
    status_id: 1,
    tickettype_id: resource === 'projects' ? 6 : 1,
    sla_id: 1,
    priority_id: 3,
    client_id: 0,
    client_name: '',
    site_id: 0,
    site_name: '',
    user_id: 0,
    user_name: '',
    team: '',
    agent_id: 0,
    category_1: '',
    dateclosed: null,
    lastactiondate: now,
    last_update: now,
    onhold: false,
    inactive: false,
    is_project: resource === 'projects',
    locked: false,
  };
  const patch = { ...body };
  delete patch.id;
  applyFaultChange(inst, rec, patch, now);
  inst.insert(resource, rec);
  return rec;
}

/**
 * Changes a ticket or project. `fromApi`: an integration is writing, so a locked record (Halo's lock,
 * which also marks the baseline project) refuses the change; the MSP in the UI may edit it anyway.
 */
export function updateFault(
  inst: HaloInstance, resource: FaultResource, id: number, patch: HaloRecord, at: Date, fromApi: boolean,
): HaloRecord {
  const rec = inst.table(resource).get(id);
  if (!rec) throw notFound(`${resource === 'projects' ? 'Project' : 'Ticket'} ${id} not found`);
  if (fromApi && rec.locked === true) throw badRequest(`Ticket ${id} is locked and cannot be edited`);
  const change = { ...patch };
  delete change.id;
  applyFaultChange(inst, rec, change, haloTime(at));
  return rec;
}

/** Adds an action (a note) to a ticket or project, as POST /api/Actions does. */
export function addAction(inst: HaloInstance, body: HaloRecord, at: Date, fromApi: boolean): HaloRecord {
  const ticketId = positiveInt(body.ticket_id);
  if (ticketId == null) throw badRequest('ticket_id is required');
  const fault = inst.fault(ticketId);
  if (!fault) throw badRequest(`Ticket ${String(body.ticket_id)} not found`);
  if (fromApi && fault.record.locked === true) throw badRequest(`Ticket ${ticketId} is locked and cannot be edited`);
  const now = haloTime(at);
  const agent = positiveInt(body.who_agentid) != null ? inst.table('agents').get(Number(body.who_agentid)) : undefined;
  const action: HaloRecord = {
    id: inst.nextId('actions'),
    ticket_id: ticketId,
    outcome: typeof body.outcome === 'string' && body.outcome ? body.outcome : 'Note',
    note: typeof body.note === 'string' ? body.note : '',
    who: agent ? agent.name : 'API',
    who_agentid: agent ? agent.id : 0,
    datetime: now,
    actiondatecreated: now,
    timetaken: typeof body.timetaken === 'number' ? body.timetaken : 0,
    hiddenfromuser: body.hiddenfromuser === true,
  };
  // Time-entry fields of an action, kept when the caller sends them.
  if (typeof body.actisbillable === 'boolean') action.actisbillable = body.actisbillable;
  for (const field of ['actionarrivaldate', 'actioncompletiondate']) {
    const at = typeof body[field] === 'string' ? parseHaloTime(body[field]) : null;
    if (at) action[field] = haloTime(at);
  }
  // An action may move the ticket on (Halo's `new_status`), e.g. the closing action.
  const patch: HaloRecord = {};
  if (body.new_status != null) patch.status_id = body.new_status;
  applyFaultChange(inst, fault.record, patch, now);
  fault.record.lastactiondate = now;
  inst.insert('actions', action);
  return action;
}

/** Any other resource: merge the change and stamp its last-updated field, if it has one. */
export function updateRecord(inst: HaloInstance, resource: HaloResource, id: string | number, patch: HaloRecord, at: Date): HaloRecord {
  const rec = inst.table(resource).get(id);
  if (!rec) throw notFound(`${resource} ${id} not found`);
  for (const [k, v] of Object.entries(patch)) if (k !== 'id') rec[k] = clone(v);
  const field = LAST_UPDATE_FIELD[resource];
  if (field) rec[field] = haloTime(at);
  return rec;
}

export function createRecord(inst: HaloInstance, resource: HaloResource, record: HaloRecord, at: Date): HaloRecord {
  const rec = clone(record);
  if (rec.id == null) rec.id = inst.nextId(resource);
  else if (inst.table(resource).get(rec.id)) throw badRequest(`${resource} ${rec.id} already exists`);
  const field = LAST_UPDATE_FIELD[resource];
  if (field) rec[field] = haloTime(at);
  inst.insert(resource, rec);
  return rec;
}
