/**
 * Halo's REST API under /api, in Halo's shapes: paged lists `{page_no, page_size, record_count,
 * <key>: [...]}` with `pageinate=true&page_size&page_no`, plain arrays for the lookup lists
 * (Agent, Status, Priority, Team), `lastupdatefromdate`/`lastupdatetodate` on the lists that have them,
 * and writes as a POSTed JSON array whose elements with an `id` update and without one create.
 */
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { VendorClock } from '../kit';
import { HaloApiError, badRequest, notFound } from './errors';
import { addAction, createFault, updateFault, validateFaultCreate, type FaultResource } from './mutations';
import { writeInvoiceLines } from './invoice-lines';
import {
  HALO_CLOSED_STATUS_ID, LAST_UPDATE_FIELD, parseHaloTime,
  type HaloInstance, type HaloRecord, type HaloResource,
} from './store';

/** Halo's documented largest page (`page_size` "Maximum size: 100" on Tickets and Projects). */
export const HALO_MAX_PAGE_SIZE = 100;
/** Page size when pageinate is set without page_size (unconfirmed; Halo's UI pages by 50). */
const DEFAULT_PAGE_SIZE = 50;

type Query = Record<string, string>;

/** Halo's query parameters are case-insensitive; keep the first value of each, keyed lower-case. */
function lowerQuery(req: Request): Query {
  const q: Query = {};
  for (const [k, v] of Object.entries(req.query as Record<string, unknown>)) {
    const value = Array.isArray(v) ? v[0] : v;
    if (value != null) q[k.toLowerCase()] = String(value);
  }
  return q;
}

function flag(q: Query, name: string, fallback: boolean): boolean {
  const v = q[name];
  return v === undefined ? fallback : v.toLowerCase() === 'true' || v === '1';
}

function intParam(q: Query, name: string): number | null {
  const v = q[name];
  if (v === undefined || v === '') return null;
  const n = Number(v);
  if (!Number.isInteger(n)) throw badRequest(`${name} must be a whole number`);
  return n;
}

function timeParam(q: Query, name: string): number | null {
  const v = q[name];
  if (v === undefined || v === '') return null;
  const d = parseHaloTime(v);
  if (!d) throw badRequest(`${name} is not a valid date`);
  return d.getTime();
}

function compareField(a: unknown, b: unknown): number {
  if (a == null || b == null) return a == null ? (b == null ? 0 : -1) : 1;
  return typeof a === 'number' && typeof b === 'number' ? a - b : String(a).localeCompare(String(b));
}

const contains = (haystack: unknown, needle: string) =>
  typeof haystack === 'string' && haystack.toLowerCase().includes(needle.toLowerCase());

/**
 * GET /api/Tickets and /api/Projects filters. Only parameters Halo's published swagger lists are
 * implemented; any other parameter is ignored (not refused), as Halo does — e.g. there is no
 * `third_party_id_string` filter, so a lookup by it answers the unfiltered first page.
 * (covenanttechnologysolutions/halopsa-rest generator/spec/swagger.json, GET /Tickets.)
 */
function faultFilter(q: Query): (r: HaloRecord) => boolean {
  const clientId = intParam(q, 'client_id');
  const statusId = intParam(q, 'status_id');
  const agentId = intParam(q, 'agent_id');
  const openOnly = flag(q, 'open_only', false);
  const closedOnly = flag(q, 'closed_only', false);
  const ids = q.ticketids ? new Set(q.ticketids.split(',').map((s) => Number(s.trim()))) : null;
  const dateWindow = dateSearch(q);
  return (r) =>
    (clientId == null || r.client_id === clientId) &&
    (statusId == null || r.status_id === statusId) &&
    (agentId == null || r.agent_id === agentId) &&
    (!openOnly || r.status_id !== HALO_CLOSED_STATUS_ID) &&
    (!closedOnly || r.status_id === HALO_CLOSED_STATUS_ID) &&
    (!ids || ids.has(r.id)) &&
    (!q.search || contains(r.summary, q.search)) &&
    (!q.search_summary || contains(r.summary, q.search_summary)) &&
    (!q.search_details || contains(r.details, q.search_details)) &&
    dateWindow(r);
}

/** Halo's `datesearch` names the date field (swagger: "Date Opened - 'dateoccured', Date Closed - 'datecleared'"). */
const DATE_SEARCH_FIELDS: Record<string, string> = { dateoccured: 'dateoccurred', dateoccurred: 'dateoccurred', datecleared: 'dateclosed' };

/** `datesearch` with `startdate`/`enddate`: records whose named date lies in the window. */
function dateSearch(q: Query): (r: HaloRecord) => boolean {
  const field = q.datesearch ? DATE_SEARCH_FIELDS[q.datesearch.toLowerCase()] : undefined;
  if (!field) return () => true;
  const from = timeParam(q, 'startdate');
  const to = timeParam(q, 'enddate');
  return (r) => {
    const t = parseHaloTime(r[field])?.getTime();
    return t != null && (from == null || t >= from) && (to == null || t <= to);
  };
}

/** Active/inactive selection as Halo's includeactive/includeinactive (inactive left out by default). */
function activeFilter(q: Query, isInactive: (r: HaloRecord) => boolean): (r: HaloRecord) => boolean {
  const active = flag(q, 'includeactive', true);
  const inactive = flag(q, 'includeinactive', false);
  return (r) => (isInactive(r) ? inactive : active);
}

interface ListSpec {
  resource: HaloResource;
  /** The wrapping key of a paged list; null: Halo answers a plain array. */
  key: string | null;
  filter?: (q: Query) => (r: HaloRecord) => boolean;
  /** Halo has lastupdatefromdate/lastupdatetodate on this list. */
  lastUpdateFilter?: boolean;
  /** Shapes each record for the answer (e.g. invoice lines only with includelines). */
  present?: (q: Query) => (r: HaloRecord) => HaloRecord;
}

function withoutLines(r: HaloRecord): HaloRecord {
  const copy = { ...r };
  delete copy.lines;
  return copy;
}

const LISTS: Record<string, ListSpec> = {
  tickets: { resource: 'tickets', key: 'tickets', filter: faultFilter, lastUpdateFilter: true },
  projects: { resource: 'projects', key: 'tickets', filter: faultFilter, lastUpdateFilter: true },
  actions: {
    resource: 'actions', key: 'actions',
    filter: (q) => { const t = intParam(q, 'ticket_id'); return (r) => t == null || r.ticket_id === t; },
  },
  client: {
    resource: 'clients', key: 'clients', lastUpdateFilter: true,
    filter: (q) => { const a = activeFilter(q, (r) => r.inactive === true); return (r) => a(r) && (!q.search || contains(r.name, q.search)); },
  },
  users: {
    resource: 'users', key: 'users', lastUpdateFilter: true,
    filter: (q) => {
      const a = activeFilter(q, (r) => r.inactive === true);
      const clientId = intParam(q, 'client_id');
      return (r) => a(r) && (clientId == null || r.client_id === clientId) &&
        (!q.search || contains(r.name, q.search) || contains(r.emailaddress, q.search));
    },
  },
  agent: {
    resource: 'agents', key: null,
    filter: (q) => {
      const enabled = flag(q, 'includeenabled', true);
      const disabled = flag(q, 'includedisabled', false);
      return (r) => (r.isdisabled === true ? disabled : enabled);
    },
  },
  status: {
    resource: 'statuses', key: null,
    filter: (q) => { const x = flag(q, 'excludeclosed', false); return (r) => !x || r.id !== HALO_CLOSED_STATUS_ID; },
  },
  priority: { resource: 'priorities', key: null },
  team: { resource: 'teams', key: null },
  clientcontract: {
    resource: 'contracts', key: 'contracts',
    filter: (q) => {
      const clientId = intParam(q, 'client_id');
      const inactive = flag(q, 'includeinactive', false);
      return (r) => (clientId == null || r.client_id === clientId) && (inactive || r.active !== false);
    },
  },
  recurringinvoice: {
    resource: 'recurring_invoices', key: 'invoices',
    filter: (q) => {
      const clientId = intParam(q, 'client_id');
      const contractId = intParam(q, 'contract_id');
      return (r) => (clientId == null || r.client_id === clientId) && (contractId == null || r.contract_id === contractId);
    },
    present: (q) => (flag(q, 'includelines', false) ? (r) => r : withoutLines),
  },
  // GET /api/Item (Halo swagger: includeactive, includeinactive, recurringonly, search, paging). The
  // paged wrapper key `items` is unconfirmed (the swagger names no response schema); Halo's other
  // lists wrap in the plural of the resource.
  item: {
    resource: 'items', key: 'items',
    filter: (q) => {
      const a = activeFilter(q, (r) => r.inactive === true);
      const recurringOnly = flag(q, 'recurringonly', false);
      return (r) => a(r) && (!recurringOnly || r.isrecurringitem === true) && (!q.search || contains(r.name, q.search));
    },
  },
};

/** Singles served at /api/<Path>/:id, by list name. */
const SINGLES: Record<string, HaloResource> = {
  tickets: 'tickets', projects: 'projects', actions: 'actions', client: 'clients', users: 'users', agent: 'agents',
  status: 'statuses', team: 'teams', clientcontract: 'contracts', recurringinvoice: 'recurring_invoices',
  item: 'items',
};

export interface HaloApiDeps {
  instance(name: string): HaloInstance;
  clock: VendorClock;
}

function listHandler(spec: ListSpec, deps: HaloApiDeps) {
  return (req: Request, res: Response) => {
    const q = lowerQuery(req);
    const inst = deps.instance(res.locals.instance as string);
    const keep = spec.filter ? spec.filter(q) : () => true;
    let rows = inst.table(spec.resource).rows.filter(keep);
    const field = LAST_UPDATE_FIELD[spec.resource];
    if (spec.lastUpdateFilter && field) {
      const from = timeParam(q, 'lastupdatefromdate');
      const to = timeParam(q, 'lastupdatetodate');
      if (from != null || to != null) {
        rows = rows.filter((r) => {
          const t = parseHaloTime(r[field])?.getTime();
          return t != null && (from == null || t >= from) && (to == null || t <= to);
        });
      }
    }
    // Rows are kept in id order; `order` names another field to sort by first.
    const order = q.order?.toLowerCase();
    if (order && order !== 'id') rows = rows.slice().sort((a, b) => compareField(a[order], b[order]) || a.id - b.id);
    if (flag(q, 'orderdesc', false)) rows = rows.slice().reverse();
    const total = rows.length;
    const present = spec.present ? spec.present(q) : (r: HaloRecord) => r;

    if (spec.key && flag(q, 'pageinate', false)) {
      const pageSize = Math.min(HALO_MAX_PAGE_SIZE, Math.max(1, intParam(q, 'page_size') ?? DEFAULT_PAGE_SIZE));
      const pageNo = Math.max(1, intParam(q, 'page_no') ?? 1);
      const page = rows.slice((pageNo - 1) * pageSize, pageNo * pageSize).map(present);
      res.json({ page_no: pageNo, page_size: pageSize, record_count: total, [spec.key]: page });
      return;
    }
    const count = intParam(q, 'count');
    const chosen = (count != null && count >= 0 ? rows.slice(0, count) : rows).map(present);
    res.json(spec.key ? { record_count: total, [spec.key]: chosen } : chosen);
  };
}

function singleHandler(resource: HaloResource, deps: HaloApiDeps) {
  return (req: Request, res: Response) => {
    const rec = deps.instance(res.locals.instance as string).table(resource).get(String(req.params.id));
    if (!rec) throw notFound(`${resource} ${String(req.params.id)} not found`);
    res.json(rec);
  };
}

function arrayBody(req: Request): HaloRecord[] {
  const body: unknown = req.body;
  if (!Array.isArray(body) || body.length === 0 || !body.every((e) => e && typeof e === 'object' && !Array.isArray(e))) {
    throw badRequest('The request body must be a JSON array of objects');
  }
  return body as HaloRecord[];
}

/** Halo answers a one-element POST with the object and a longer one with the array. */
function answerWrites(res: Response, written: HaloRecord[]): void {
  res.status(201).json(written.length === 1 ? written[0] : written);
}

function faultWriteHandler(resource: FaultResource, deps: HaloApiDeps) {
  return (req: Request, res: Response) => {
    const inst = deps.instance(res.locals.instance as string);
    const elements = arrayBody(req);
    // Refuse the whole batch before changing anything when one element cannot be written.
    for (const e of elements) {
      if (e.id != null && Number(e.id) > 0) {
        if (!inst.table(resource).get(Number(e.id))) throw notFound(`${resource === 'projects' ? 'Project' : 'Ticket'} ${String(e.id)} not found`);
      } else {
        validateFaultCreate(inst, e);
      }
    }
    const written = elements.map((e) =>
      e.id != null && Number(e.id) > 0
        ? updateFault(inst, resource, Number(e.id), e, deps.clock.now(), true)
        : createFault(inst, resource, e, deps.clock.now()),
    );
    answerWrites(res, written);
  };
}

export function haloApiRouter(deps: HaloApiDeps): Router {
  const r = express.Router();
  r.use(express.json({ limit: '5mb' }));

  for (const [path, spec] of Object.entries(LISTS)) r.get(`/${path}`, listHandler(spec, deps));
  for (const [path, resource] of Object.entries(SINGLES)) r.get(`/${path}/:id`, singleHandler(resource, deps));

  r.post('/tickets', faultWriteHandler('tickets', deps));
  r.post('/projects', faultWriteHandler('projects', deps));
  r.post('/actions', (req, res) => {
    const inst = deps.instance(res.locals.instance as string);
    const written = arrayBody(req).map((e) => addAction(inst, e, deps.clock.now(), true));
    answerWrites(res, written);
  });

  // Agreement lines of a contract: the lines of its recurring invoice (invoice-lines.ts).
  r.post('/recurringinvoice/lines', (req, res) => {
    const inst = deps.instance(res.locals.instance as string);
    answerWrites(res, writeInvoiceLines(inst, arrayBody(req), deps.clock.now()));
  });

  r.use((_req: Request, res: Response) => {
    res.status(404).json('The requested resource does not exist');
  });
  r.use((err: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (err instanceof HaloApiError) {
      res.status(err.status).json(err.message);
      return;
    }
    const e = err as { status?: number; type?: string };
    if (e && (e.type === 'entity.parse.failed' || e.status === 400)) {
      res.status(400).json('The request body is not valid JSON');
      return;
    }
    next(err);
  });
  return r;
}
