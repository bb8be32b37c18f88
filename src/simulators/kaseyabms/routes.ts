/**
 * BMS API 2.0 under /v2, in BMS's shapes (see ./schema.ts and ./envelope.ts): the lists page with
 * `PageSize` and `PageNumber` (paged answers carry `TotalRecords`), filters are `Filter.<Name>` query
 * parameters, and any parameter the simulator does not implement is ignored, as ASP.NET model binding
 * ignores it. Writes are checked against the operation's input schema, then against the instance's
 * records (an id that names nothing is refused in the envelope).
 */
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { VendorClock } from '../kit';
import { BmsRefusal, failure, invalid, missing, success } from './envelope';
import { addNote, addTimeLog, addRecurringServices, createTicket, patchTicket, resolveTicket } from './mutations';
import { project } from './schema';
import { CHANGE_FIELD, type BmsInstance, type BmsRecord, type BmsResource } from './store';

/** Page size when PageSize is absent (undocumented; the sandbox's choice). */
const DEFAULT_PAGE_SIZE = 50;
/** The largest page the simulator answers (undocumented at BMS; the sandbox's bound). */
export const BMS_MAX_PAGE_SIZE = 100;

export interface BmsContext { instance(name: string): BmsInstance; clock: VendorClock }

type Handler = (req: Request, inst: BmsInstance, res: Response) => void;

function q(req: Request, name: string): string | undefined {
  const v = (req.query as Record<string, unknown>)[name];
  const first = Array.isArray(v) ? v[0] : v;
  return first == null || first === '' ? undefined : String(first);
}

function intQ(req: Request, name: string): number | undefined {
  const v = q(req, name);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n)) throw invalid(`The value '${v}' is not valid for ${name}.`);
  return n;
}

function timeQ(req: Request, name: string): number | undefined {
  const v = q(req, name);
  if (v === undefined) return undefined;
  const t = Date.parse(v);
  if (Number.isNaN(t)) throw invalid(`The value '${v}' is not valid for ${name}.`);
  return t;
}

function pathId(req: Request, name: string): number {
  const n = Number(req.params[name]);
  if (!Number.isInteger(n)) throw invalid(`The value '${req.params[name]}' is not valid.`);
  return n;
}

/** One page of `rows` (in id order), as PageNumber/PageSize select it. */
function page(req: Request, rows: BmsRecord[]): BmsRecord[] {
  const size = Math.min(intQ(req, 'PageSize') ?? DEFAULT_PAGE_SIZE, BMS_MAX_PAGE_SIZE);
  const number = intQ(req, 'PageNumber') ?? 1;
  if (size < 1 || number < 1) throw invalid('PageSize and PageNumber must be greater than 0.');
  return rows.slice((number - 1) * size, number * size);
}

const since = (resource: BmsResource, from: number | undefined) => (r: BmsRecord) =>
  from === undefined || Date.parse(String(r[CHANGE_FIELD[resource] ?? 'ModifiedOn'] ?? '')) >= from;

const contains = (haystack: unknown, needle: string | undefined) =>
  needle === undefined || (typeof haystack === 'string' && haystack.toLowerCase().includes(needle.toLowerCase()));

/** A paged list: the page's rows cut to `dto`, with the filtered total. */
function paged(req: Request, res: Response, rows: BmsRecord[], dto: string): void {
  success(res, page(req, rows).map((r) => project(dto, r)), rows.length);
}

function ticketOf(inst: BmsInstance, req: Request): BmsRecord {
  const t = inst.get('tickets', pathId(req, 'ticketId'));
  if (!t) throw missing(`Ticket with id ${req.params.ticketId} was not found.`);
  return t;
}

const ticketList: Handler = (req, inst, res) => {
  const from = timeQ(req, 'Filter.LastActivityUpdateFrom');
  const exclude = intQ(req, 'Filter.ExcludeCompleted') === 1;
  const number = q(req, 'Filter.TicketNumber');
  const details = q(req, 'Filter.Details');
  const accounts = q(req, 'Filter.AccountIds')?.split(',').map((s) => Number(s.trim()));
  const rows = inst.table('tickets').filter((t) => since('tickets', from)(t)
    && (!exclude || t.CompletedDate == null) && (number === undefined || t.TicketNumber === number)
    && contains(t.Details, details) && (!accounts || accounts.includes(t.AccountId)));
  paged(req, res, rows, 'TicketListDto');
};

const lookup = (resource: BmsResource, dto: string): Handler => (_req, inst, res) =>
  success(res, inst.table(resource).map((r) => project(dto, r)));

/** The handlers by method and the document's path template (Express syntax). */
const ROUTES: [method: 'get' | 'post' | 'patch', path: string, handler: Handler][] = [
  ['get', '/servicedesk/tickets', ticketList],
  ['post', '/servicedesk/tickets', (req, inst, res) => success(res, project('TicketOutputDto', createTicket(inst, req.body, res.locals.bmsUser)))],
  ['get', '/servicedesk/tickets/:ticketId', (req, inst, res) => success(res, project('TicketOutputDto', ticketOf(inst, req)))],
  ['patch', '/servicedesk/tickets/:ticketId', (req, inst, res) => success(res, project('TicketOutputDto', patchTicket(inst, ticketOf(inst, req), req.body)))],
  ['post', '/servicedesk/tickets/:ticketId/resolve', (req, inst, res) => success(res, project('TicketOutputDto', resolveTicket(inst, ticketOf(inst, req), req.body, res.locals.bmsUser)))],
  ['get', '/servicedesk/tickets/:ticketId/notes', (req, inst, res) => {
    const t = ticketOf(inst, req);
    success(res, page(req, inst.table('notes').filter((n) => n.TicketId === t.Id)).map((n) => project('TicketNoteOutputDto', n)));
  }],
  ['post', '/servicedesk/tickets/:ticketId/notes', (req, inst, res) => success(res, project('TicketNoteOutputDto', addNote(inst, ticketOf(inst, req), req.body, res.locals.bmsUser)))],
  ['get', '/servicedesk/tickets/:ticketId/timelogs', (req, inst, res) => {
    const t = ticketOf(inst, req);
    success(res, page(req, inst.table('timelogs').filter((n) => n.TicketId === t.Id)).map((n) => project('TicketTimeEntryOutputDto', n)));
  }],
  ['post', '/servicedesk/tickets/:ticketId/timelogs', (req, inst, res) => success(res, project('TicketTimeEntryOutputDto', addTimeLog(inst, ticketOf(inst, req), req.body, res.locals.bmsUser)))],
  ['get', '/system/statuses/lookup', lookup('statuses', 'StatusLookupOutputDto')],
  ['get', '/system/priorities/lookup', lookup('priorities', 'PriorityLookupOutputDto')],
  ['get', '/system/queues/lookup', lookup('queues', 'QueueLookupOutputDto')],
  ['get', '/system/roles/lookup', lookup('roles', 'RoleLookupOutputDto')],
  ['get', '/hr/employees/lookup', (req, inst, res) => success(res, page(req, inst.table('employees')).map((e) => project('EmployeeLookupOutputDto', e)))],
  ['get', '/crm/accounts/summary', (req, inst, res) => {
    const from = timeQ(req, 'Filter.ModifiedOnFrom');
    paged(req, res, inst.table('accounts').filter(since('accounts', from)), 'AccountSummaryOutputDto');
  }],
  ['get', '/crm/accounts/:accountId/locations/lookup', (req, inst, res) => {
    const a = inst.get('accounts', pathId(req, 'accountId'));
    if (!a) throw missing(`Account with id ${req.params.accountId} was not found.`);
    success(res, (a.Locations ?? []).map((l: BmsRecord) => project('AccountLocationLookupOutputDto', { Id: l.Id, Name: l.LocationName, AccountId: a.Id, IsMain: l.IsMain })));
  }],
  ['get', '/crm/contacts/summary', (req, inst, res) => {
    const from = timeQ(req, 'Filter.ModifiedOnFrom');
    const account = intQ(req, 'Filter.AccountId');
    paged(req, res, inst.table('contacts').filter((c) => since('contacts', from)(c) && (account === undefined || c.AccountId === account)), 'ContactsSummaryOutputDto');
  }],
  ['get', '/finance/contracts/summary', (req, inst, res) => paged(req, res, inst.table('contracts'), 'ClientContractSummaryOutputDto')],
  ['post', '/finance/contracts/recurringservices/:contractId/services', (req, inst, res) => {
    const contract = inst.get('contracts', pathId(req, 'contractId'));
    if (!contract) throw missing(`Contract with id ${req.params.contractId} was not found.`);
    success(res, project('RecurringServicePostOutputDto', addRecurringServices(inst, contract, req.body, res.locals.bmsUser)));
  }],
  ['get', '/admin/finance/services/lookup', (req, inst, res) => paged(req, res, inst.table('services'), 'ServiceLookupOutputDto')],
  ['get', '/project/projects/summary', (req, inst, res) => {
    const account = intQ(req, 'Filter.AccountId');
    paged(req, res, inst.table('projects').filter((p) => account === undefined || p.AccountId === account), 'ProjectsListSummaryOutputDto');
  }],
];

/** Who the token's user is, with the rights the connect page reads (UserInfoOutputDto). */
function userInfo(inst: BmsInstance, res: Response): BmsRecord {
  const user = inst.table('employees').find((e) => e.UserName === res.locals.bmsUser) ?? { Id: 0, Name: res.locals.bmsUser };
  const limited = res.locals.limited === true;
  return {
    UserId: user.Id, FullName: user.Name, EmailAddress: user.Email ?? null, TimeStamp: new Date().toISOString(), TenantId: 1,
    IsUserSystemAdmin: false,
    // The service desk's ticket listing; a limited user may view but not modify it.
    UserAccessRights: [{ CanView: true, CanModify: !limited, CanDelete: false, MainMenuId: 3, MenuCategoryId: 0, ListingIDEnum: 0 }],
    SpecialFeatures: [],
  };
}

export function bmsApiRouter(ctx: BmsContext): Router {
  const r = express.Router();
  r.use(express.json({ limit: '1mb', type: ['application/json', 'application/*+json', 'text/json'] }));
  const wrap = (h: Handler) => (req: Request, res: Response, next: NextFunction) => {
    try {
      // The limited sandbox user's security role has no modify right: BMS refuses its writes in the envelope.
      if (req.method !== 'GET' && res.locals.limited === true) throw new BmsRefusal(403, 'You do not have permission to perform this action.');
      h(req, ctx.instance(String(res.locals.instance)), res);
    } catch (err) {
      if (err instanceof BmsRefusal) failure(res, err.code, err.message, err.subErrors);
      else next(err);
    }
  };
  r.get('/security/userinfo', wrap((_req, inst, res) => success(res, userInfo(inst, res))));
  for (const [method, path, handler] of ROUTES) r[method](path, wrap(handler));
  // An operation the simulator does not serve: ASP.NET's 404 with no body.
  r.use((_req, res) => { res.status(404).end(); });
  return r;
}
