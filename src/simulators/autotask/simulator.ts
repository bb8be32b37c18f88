/**
 * Autotask PSA REST simulator, mounted at /sandbox-vendors/autotask, API under /atservicesrest/v1.0.
 *
 * Reproduces the parts of Autotask our service relies on: header authentication (ApiIntegrationCode,
 * UserName, Secret, optional ImpersonationResourceId), ZoneInformation, entity queries (POST
 * <Entity>/query, GET <Entity>/query?search=, GET|POST <Entity>/query/next with the paging state in
 * the URL, <Entity>/query/count), GET <Entity>/{id}, entity information with picklists, Autotask's
 * write rules for Tickets, TicketNotes and TimeEntries, and for recurring-service contracts
 * (ContractServices through their contract, ContractServiceAdjustments; contract-writes.ts) (refusals are HTTP 500 `{errors: [...]}` as
 * Autotask does), and its usage limits (see limits.ts). State is per database ("instance"), selected
 * by the credentials.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import { controlRouter, FaultInjector, VendorClock, type VendorSimulator } from '../kit';
import http from 'node:http';
import { ENTITIES, fieldSeedEntity, fieldSeedKey, type EntityName, type FieldInfo } from './fields';
import { UsageLimits } from './limits';
import {
  compileFilter, countMatches, MAX_RECORDS, pageUrl, parseJsonParam, parsePaging, parseSearch, project, runPage,
  type Paging, type QuerySearch,
} from './query';
import { AutotaskError, clone, entityFromPath, InstanceState, type Row } from './store';
import { grow as growRows } from './synth';
import { createContractService, createContractServiceAdjustment, updateContractService } from './contract-writes';
import { applyTicketChange, createTicket, createTicketNote, createTimeEntry, updateTicket, type WriteContext } from './writes';
import { createProjectNote, createTask } from './project-writes';

export interface AutotaskCredential {
  userName: string;
  secret: string;
  integrationCode: string;
  /** The database (instance) these credentials open. */
  instance: string;
}

/** Public development credentials of the sandbox. */
export const AUTOTASK_SANDBOX_CREDENTIAL: AutotaskCredential = {
  userName: 'sandbox',
  secret: 'sandbox-secret',
  integrationCode: 'SANDBOX',
  instance: 'autotask-demo',
};

export interface AutotaskSimulatorOptions {
  controlToken?: string;
  credentials?: AutotaskCredential[];
  /** Requests per database per rolling hour (Autotask: 10,000). */
  requestsPerHour?: number;
  /** Latency added to each answer past 50% / 75% of the hourly budget (Autotask: about 0.5-1 s). */
  latencyPast50PctMs?: number;
  latencyPast75PctMs?: number;
  /** Concurrent requests per integration code and entity endpoint (Autotask: 3). */
  threadsPerEndpoint?: number;
  /** Time every answered request takes (holds its thread). */
  responseDelayMs?: number;
  /** The ticket category's "Require titles on ticket notes" setting. */
  requireTicketNoteTitles?: boolean;
  /** The system setting "Allow users to modify Role when creating/editing time entries on tickets" (off by default). */
  allowTimeEntryRoleChange?: boolean;
  /** The zone zoneInformation names (default: this simulator's own mount, zone "Sandbox"). */
  zone?: { zoneName: string; url: string };
  /** The vendor's wall clock in ms (default the real one); tests fix it where an answer depends on the date. */
  now?: () => number;
}

export interface AutotaskSimulator extends VendorSimulator {
  readonly limits: UsageLimits;
  get(instance: string, entity: EntityName, id: number): Record<string, unknown> | undefined;
  list(instance: string, entity: EntityName): Record<string, unknown>[];
  /** Changes a record as the MSP would in the Autotask UI; bumps its last-activity time. */
  update(instance: string, entity: EntityName, id: number, patch: Record<string, unknown>): Record<string, unknown>;
  /** Adds a record as the MSP would in the Autotask UI (no API validation). */
  create(instance: string, entity: EntityName, record: Record<string, unknown>): Record<string, unknown>;
  /** Adds a note to a ticket as a technician would; bumps the ticket's last-activity time. */
  addNote(instance: string, ticketId: number, note: { description: string; title?: string; noteType?: number; publish?: number }): Record<string, unknown>;
  /** The instance's field information for an entity (what entityInformation/fields answers). */
  fields(instance: string, entity: EntityName): FieldInfo[];
  /** Requests counted against the instance's hourly budget. */
  requestsUsed(instance: string): number;
}

interface CallContext {
  state: InstanceState;
  credential: AutotaskCredential;
  impersonatedResourceId: number | null;
}

/** Field that records when a row last changed, per entity (Autotask names it differently per entity). */
const ACTIVITY_FIELDS: Partial<Record<EntityName, string[]>> = {
  Tickets: ['lastActivityDate'],
  TicketNotes: ['lastActivityDate'],
  Companies: ['lastActivityDate', 'lastTrackedModifiedDateTime'],
  Contacts: ['lastActivityDate', 'lastModifiedDate'],
  Projects: ['lastActivityDateTime'],
  ProjectNotes: ['lastActivityDate'],
  Tasks: ['lastActivityDateTime'],
  TimeEntries: ['lastModifiedDateTime'],
  Services: ['lastModifiedDate'],
};
const CREATE_FIELDS = ['createDate', 'createDateTime'];

export function createAutotaskSimulator(opts: AutotaskSimulatorOptions = {}): AutotaskSimulator {
  // Injected faults in Autotask's error body, `{errors: [...]}`.
  const faults = new FaultInjector((status) => ({ errors: [`${http.STATUS_CODES[status] ?? 'Error'}: injected fault.`] }));
  // Usage is counted per API user, the credential every call carries (ZoneInformation names it in the query).
  faults.credentialOf = (req) => req.get('UserName') ?? String(req.query.user ?? '');
  const clock = new VendorClock(opts.now);
  const credentials = opts.credentials ?? [AUTOTASK_SANDBOX_CREDENTIAL];
  const requireTicketNoteTitles = opts.requireTicketNoteTitles ?? true;
  const allowTimeEntryRoleChange = opts.allowTimeEntryRoleChange ?? false;
  const limits = new UsageLimits({
    requestsPerHour: opts.requestsPerHour ?? 10_000,
    latencyPast50PctMs: opts.latencyPast50PctMs ?? 20,
    latencyPast75PctMs: opts.latencyPast75PctMs ?? 50,
    threadsPerEndpoint: opts.threadsPerEndpoint ?? 3,
    responseDelayMs: opts.responseDelayMs ?? 0,
  });
  const instances = new Map<string, InstanceState>();

  const instance = (name: string): InstanceState => {
    let s = instances.get(name);
    if (!s) {
      s = new InstanceState(name);
      instances.set(name, s);
    }
    return s;
  };
  const entityOf = (name: string): EntityName => {
    const e = entityFromPath(name);
    if (!e) throw new Error(`unknown Autotask entity ${name}`);
    return e;
  };

  const api = buildApi({ instance, credentials, limits, clock, requireTicketNoteTitles, allowTimeEntryRoleChange, entityOf, zone: opts.zone });

  const router = express.Router();
  router.use('/_control', controlRouter({ faults }, opts.controlToken));
  router.use(faults.middleware());
  router.use('/atservicesrest/v1.0', api);

  const sim: AutotaskSimulator = {
    vendor: 'autotask',
    faults,
    router,
    limits,

    seed(name, fixtures) {
      const state = new InstanceState(name);
      const entries = Object.entries(fixtures);
      // Field information first: rows are completed with the instance's fields.
      for (const [key, rows] of entries) {
        const fieldEntity = fieldSeedEntity(key);
        if (fieldEntity) state.setFieldOverrides(fieldEntity, clone(rows) as FieldInfo[]);
      }
      for (const [key, rows] of entries) {
        if (fieldSeedEntity(key)) continue;
        const entity = entityOf(key);
        state.table(entity).insertMany(rows.map((r) => state.normalize(entity, clone(r as Record<string, unknown>))));
      }
      instances.set(name, state);
    },

    grow(name, resource, count) {
      if (!growRows(instance(name), entityOf(resource), count, Date.now())) {
        throw new Error(`grow does not support ${resource}`);
      }
    },

    reset() {
      instances.clear();
      limits.reset();
    },

    get(name, entity, id) {
      const row = instance(name).table(entity).get(id);
      return row ? clone(row) : undefined;
    },

    list(name, entity) {
      return instance(name).table(entity).all().map((r) => clone(r));
    },

    update(name, entity, id, patch) {
      const state = instance(name);
      const row = state.table(entity).get(id);
      if (!row) throw new Error(`${entity} ${id} not found in ${name}`);
      const stamp = clock.now().toISOString();
      const { id: _ignored, ...changes } = patch;
      if (entity === 'Tickets') {
        applyTicketChange(row, changes, stamp, null);
      } else {
        Object.assign(row, changes);
        for (const f of ACTIVITY_FIELDS[entity] ?? []) row[f] = stamp;
      }
      return clone(row);
    },

    create(name, entity, record) {
      const state = instance(name);
      const at = clock.now();
      const stamp = at.toISOString();
      const row: Record<string, unknown> = { ...record, id: record.id ?? state.table(entity).nextId() };
      for (const f of [...CREATE_FIELDS, ...(ACTIVITY_FIELDS[entity] ?? [])]) {
        if (state.field(entity, f) && row[f] == null) row[f] = stamp;
      }
      if (entity === 'Tickets') {
        row.ticketNumber ??= state.nextTicketNumber(at);
        if (row.status === 5) row.completedDate ??= stamp;
      }
      const normalized = state.normalize(entity, row);
      state.table(entity).insert(normalized);
      return clone(normalized);
    },

    addNote(name, ticketId, note) {
      const state = instance(name);
      const ticket = state.table('Tickets').get(ticketId);
      if (!ticket) throw new Error(`ticket ${ticketId} not found in ${name}`);
      const stamp = clock.now().toISOString();
      const row = state.normalize('TicketNotes', {
        id: state.table('TicketNotes').nextId(),
        ticketID: ticketId,
        title: note.title ?? null,
        description: note.description,
        noteType: note.noteType ?? 1,
        publish: note.publish ?? 1,
        createDateTime: stamp,
        lastActivityDate: stamp,
      });
      state.table('TicketNotes').insert(row);
      ticket.lastActivityDate = stamp;
      return clone(row);
    },

    fields(name, entity) {
      return clone(instance(name).fields(entity));
    },

    exportState(name) {
      const state = instances.get(name);
      if (!state) return undefined;
      const records: Record<string, unknown[]> = {};
      for (const [entity, fields] of state.overrides()) records[fieldSeedKey(entity)!] = clone(fields);
      for (const [entity, table] of state.tables) if (table.size) records[entity] = clone([...table.all()]);
      // Ids continue from the rows (Autotask removes none); ticket numbers run per day, so their counters are kept.
      return { records, issued: {}, extra: { ticketNumbers: Object.fromEntries(state.ticketNumberSeq) }, clock: clock.lastStamp };
    },

    importState(name, saved) {
      sim.seed(name, saved.records);
      const numbers = saved.extra.ticketNumbers;
      if (numbers && typeof numbers === 'object') {
        for (const [day, n] of Object.entries(numbers)) if (typeof n === 'number') instance(name).ticketNumberSeq.set(day, n);
      }
      clock.continueAfter(saved.clock);
    },

    requestsUsed(name) {
      return limits.used(name);
    },
  };
  return sim;
}

interface ApiDeps {
  instance: (name: string) => InstanceState;
  credentials: AutotaskCredential[];
  limits: UsageLimits;
  clock: VendorClock;
  requireTicketNoteTitles: boolean;
  allowTimeEntryRoleChange: boolean;
  entityOf: (name: string) => EntityName;
  zone?: { zoneName: string; url: string };
}

function buildApi(deps: ApiDeps): express.Router {
  const api = express.Router();
  api.use(express.json({ limit: '5mb' }));

  const origin = (req: Request) => `${req.protocol}://${req.get('host')}`;
  const ctxOf = (res: Response) => res.locals.autotask as CallContext;
  const entityParam = (req: Request): EntityName => {
    const e = entityFromPath(String(req.params.entity));
    if (!e) throw new AutotaskError(404, [`The entity ${String(req.params.entity)} does not exist.`]);
    return e;
  };
  const entityBase = (req: Request, entity: EntityName) => `${origin(req)}${req.baseUrl}/${entity}`;
  const bodyObject = (req: Request): Record<string, unknown> => {
    const b: unknown = req.body;
    if (b == null) return {};
    if (typeof b !== 'object' || Array.isArray(b)) throw new AutotaskError(500, ['The request body must be a JSON object.']);
    return b as Record<string, unknown>;
  };
  const writeContext = (res: Response): WriteContext => ({
    state: ctxOf(res).state,
    now: () => deps.clock.now(),
    impersonatedResourceId: ctxOf(res).impersonatedResourceId,
    requireTicketNoteTitles: deps.requireTicketNoteTitles,
    allowTimeEntryRoleChange: deps.allowTimeEntryRoleChange,
  });

  // Zone discovery needs no credentials and is not limited. Unknown users: Autotask answers 500 (unconfirmed).
  api.get('/ZoneInformation', (req, res) => {
    const user = String(req.query.user ?? '').toLowerCase();
    if (!deps.credentials.some((c) => c.userName.toLowerCase() === user)) {
      throw new AutotaskError(500, ['Zone information could not be determined for this user.']);
    }
    const mount = `${origin(req)}${req.baseUrl.replace(/\/atservicesrest\/v1\.0$/i, '')}`;
    if (deps.zone) {
      res.json({ zoneName: deps.zone.zoneName, url: deps.zone.url, webUrl: deps.zone.url.replace(/ATServicesRest\/?$/i, ''), ci: 0 });
      return;
    }
    res.json({ zoneName: 'Sandbox', url: `${mount}/atservicesrest/`, webUrl: `${mount}/`, ci: 0 });
  });

  api.use((req, res, next) => {
    const userName = req.get('UserName');
    const secret = req.get('Secret');
    const code = req.get('ApiIntegrationCode');
    const credential = deps.credentials.find(
      (c) => c.userName.toLowerCase() === (userName ?? '').toLowerCase() && c.secret === secret && c.integrationCode === code,
    );
    if (!userName || !secret || !code || !credential) {
      throw new AutotaskError(401, ['Invalid credentials: UserName, Secret and ApiIntegrationCode must identify an API user.']);
    }
    const state = deps.instance(credential.instance);
    let impersonatedResourceId: number | null = null;
    const imp = req.get('ImpersonationResourceId');
    if (imp) {
      const r = state.table('Resources').get(Number(imp));
      if (!r || r.isActive !== true) throw new AutotaskError(500, [`ImpersonationResourceId ${imp} is not an active resource.`]);
      impersonatedResourceId = r.id;
    }
    res.locals.autotask = { state, credential, impersonatedResourceId } satisfies CallContext;
    next();
  });

  // Usage limits, counted per database; the endpoint is the entity segment of the path.
  api.use(async (req, res, next) => {
    const { state, credential } = ctxOf(res);
    const endpoint = req.path.split('/').filter(Boolean)[0] ?? '';
    const admission = deps.limits.admit(state.name, credential.integrationCode, endpoint);
    if (!admission.ok) {
      res.setHeader('Retry-After', String(admission.retryAfterSeconds));
      res.status(429).json({ errors: [admission.message] });
      return;
    }
    res.once('finish', admission.release);
    res.once('close', admission.release);
    if (admission.delayMs > 0) await new Promise((r) => setTimeout(r, admission.delayMs));
    next();
  });

  // ContractServiceAdjustments can only be created; it cannot be queried or updated (Autotask REST entity page).
  api.use('/ContractServiceAdjustments', (req, _res, next) => {
    if (req.method === 'POST' && (req.path === '/' || req.path === '')) return next();
    throw new AutotaskError(405, ['The ContractServiceAdjustments entity can only be created; it cannot be queried, updated or deleted.']);
  });

  const answerPage = (req: Request, res: Response, entity: EntityName, search: QuerySearch, paging: Paging) => {
    const { state } = ctxOf(res);
    const predicate = compileFilter(state, entity, search.filter);
    const afterId = paging.nextIds[0];
    const page = runPage(state, entity, predicate, afterId, paging.pageSize);
    const base = entityBase(req, entity);
    const nextPageUrl = page.nextAfterId == null
      ? null
      : pageUrl(base, { pageSize: paging.pageSize, previousIds: [...paging.previousIds, afterId], nextIds: [page.nextAfterId] }, search);
    const prevPageUrl = paging.previousIds.length === 0
      ? null
      : pageUrl(base, { pageSize: paging.pageSize, previousIds: paging.previousIds.slice(0, -1), nextIds: [paging.previousIds[paging.previousIds.length - 1]] }, search);
    res.json({
      items: page.items.map((r) => project(r, search.IncludeFields)),
      pageDetails: { count: page.items.length, requestCount: paging.pageSize, prevPageUrl, nextPageUrl },
    });
  };
  // Ids start at 0 (the owner company is id 0), so the first page is "after -1".
  const firstPage = (search: QuerySearch): Paging => ({ pageSize: search.MaxRecords ?? MAX_RECORDS, previousIds: [], nextIds: [-1] });

  api.post('/:entity/query', (req, res) => {
    const search = parseSearch(req.body);
    answerPage(req, res, entityParam(req), search, firstPage(search));
  });
  api.get('/:entity/query', (req, res) => {
    const search = parseSearch(parseJsonParam(req.query.search, 'search'));
    answerPage(req, res, entityParam(req), search, firstPage(search));
  });
  // The next-page URL carries the search, so a GET of it as-is works; POST is accepted too.
  const nextPage = (req: Request, res: Response) => {
    const search = parseSearch(req.query.search != null ? parseJsonParam(req.query.search, 'search') : req.body);
    const paging = parsePaging(parseJsonParam(req.query.paging, 'paging'));
    if (paging.pageSize < 1 || paging.pageSize > MAX_RECORDS) throw new AutotaskError(500, ['The paging parameter is not valid.']);
    answerPage(req, res, entityParam(req), search, paging);
  };
  api.get('/:entity/query/next', nextPage);
  api.post('/:entity/query/next', nextPage);
  const count = (req: Request, res: Response, raw: unknown) => {
    const entity = entityParam(req);
    const search = parseSearch(raw);
    res.json({ queryCount: countMatches(ctxOf(res).state, entity, compileFilter(ctxOf(res).state, entity, search.filter)) });
  };
  api.post('/:entity/query/count', (req, res) => count(req, res, req.body));
  api.get('/:entity/query/count', (req, res) => count(req, res, parseJsonParam(req.query.search, 'search')));

  api.get('/:entity/entityInformation', (req, res) => {
    const entity = entityParam(req);
    const writable = ['Tickets', 'TicketNotes', 'TimeEntries', 'ContractServices', 'ContractServiceAdjustments', 'ProjectNotes', 'Tasks'].includes(entity);
    res.json({
      info: {
        name: entity, canCreate: writable, canDelete: false, canQuery: entity !== 'ContractServiceAdjustments',
        canUpdate: entity === 'Tickets' || entity === 'ContractServices',
        hasUserDefinedFields: false, supportsWebhookCallouts: false,
      },
    });
  });
  api.get('/:entity/entityInformation/fields', (req, res) => {
    res.json({ fields: clone(ctxOf(res).state.fields(entityParam(req))) });
  });
  api.get('/:entity/entityInformation/userDefinedFields', (req, res) => {
    entityParam(req);
    res.json({ fields: [] });
  });

  // Ticket notes are a child collection of tickets: GET lists a ticket's notes, POST adds one.
  api.get('/Tickets/:id/Notes', (req, res) => {
    const search: QuerySearch = { filter: [{ op: 'eq', field: 'ticketID', value: Number(req.params.id) }] };
    answerPage(req, res, 'TicketNotes', search, firstPage(search));
  });
  api.post('/Tickets/:id/Notes', (req, res) => {
    const ticketId = Number(req.params.id);
    if (!Number.isInteger(ticketId)) throw new AutotaskError(500, ['The ticket id in the URL is not valid.']);
    const row = createTicketNote(writeContext(res), bodyObject(req), ticketId);
    res.json({ itemId: row.id });
  });

  // Project notes and tasks are child collections of projects, like ticket notes of tickets.
  const projectChildren = (child: 'ProjectNotes' | 'Tasks', create: typeof createTask) => {
    const segment = child === 'ProjectNotes' ? 'Notes' : 'Tasks';
    api.get(`/Projects/:id/${segment}`, (req, res) => {
      const search: QuerySearch = { filter: [{ op: 'eq', field: 'projectID', value: Number(req.params.id) }] };
      answerPage(req, res, child, search, firstPage(search));
    });
    api.post(`/Projects/:id/${segment}`, (req, res) => {
      const projectId = Number(req.params.id);
      if (!Number.isInteger(projectId)) throw new AutotaskError(500, ['The project id in the URL is not valid.']);
      res.json({ itemId: create(writeContext(res), bodyObject(req), projectId).id });
    });
  };
  projectChildren('ProjectNotes', createProjectNote);
  projectChildren('Tasks', createTask);

  // Contract services are created and updated only through their contract: the swagger (v1.json, as
  // kept in KelvinTegelaar/AutotaskAPI) has POST/PATCH /Contracts/{parentId}/Services and, at the root,
  // only GET ContractServices/{id} and the queries. The root POST/PATCH answer 404 like any unknown route.
  api.get('/Contracts/:id/Services', (req, res) => {
    const search: QuerySearch = { filter: [{ op: 'eq', field: 'contractID', value: Number(req.params.id) }] };
    answerPage(req, res, 'ContractServices', search, firstPage(search));
  });
  api.get('/Contracts/:id/Services/:serviceId', (req, res) => {
    const row = ctxOf(res).state.table('ContractServices').get(Number(req.params.serviceId));
    if (!row || row.contractID !== Number(req.params.id)) {
      throw new AutotaskError(404, [`ContractServices with id ${String(req.params.serviceId)} was not found.`]);
    }
    res.json({ item: clone(row) });
  });
  const parentContract = (req: Request): number => {
    const contractId = Number(req.params.id);
    if (!Number.isInteger(contractId)) throw new AutotaskError(500, ['The contract id in the URL is not valid.']);
    return contractId;
  };
  api.post('/Contracts/:id/Services', (req, res) => {
    const contractId = parentContract(req);
    const body = bodyObject(req);
    if (body.contractID != null && Number(body.contractID) !== contractId) throw new AutotaskError(500, ['contractID does not match the contract in the URL.']);
    res.json({ itemId: createContractService(writeContext(res), { ...body, contractID: contractId }).id });
  });
  api.patch('/Contracts/:id/Services', (req, res) => {
    const contractId = parentContract(req);
    const body = bodyObject(req);
    const row = ctxOf(res).state.table('ContractServices').get(Number(body.id ?? body.Id ?? body.ID));
    if (row && row.contractID !== contractId) throw new AutotaskError(500, [`ContractServices with id ${row.id} is not a service of contract ${contractId}.`]);
    res.json({ itemId: updateContractService(writeContext(res), body).id });
  });

  api.get('/:entity/:id', (req, res) => {
    const entity = entityParam(req);
    const id = Number(req.params.id);
    if (!Number.isInteger(id)) throw new AutotaskError(500, [`'${String(req.params.id)}' is not a valid id.`]);
    // Autotask answers an unknown id with 404 (the v2 @apigrate/autotask-restapi README, as noted in
    // docs/vendors.md "second pass"); the exact body is unconfirmed, so it is Autotask's usual {errors: [...]}.
    const row = ctxOf(res).state.table(entity).get(id);
    if (!row) throw new AutotaskError(404, [`${entity} with id ${id} was not found.`]);
    res.json({ item: clone(row) });
  });

  api.post('/:entity', (req, res, next) => {
    const entity = entityParam(req);
    // Children are created only through their parent (Contracts/{id}/Services, Tickets/{id}/Notes,
    // Projects/{id}/Notes, Projects/{id}/Tasks): the swagger has no root POST for them, so they 404 here.
    if (['ContractServices', 'TicketNotes', 'ProjectNotes', 'Tasks'].includes(entity)) return next();
    const ctx = writeContext(res);
    let row: Row;
    if (entity === 'Tickets') row = createTicket(ctx, bodyObject(req));
    else if (entity === 'TimeEntries') row = createTimeEntry(ctx, bodyObject(req));
    else if (entity === 'ContractServiceAdjustments') row = createContractServiceAdjustment(ctx, bodyObject(req));
    else throw new AutotaskError(405, [`Creating ${entity} is not available in the sandbox.`]);
    res.json({ itemId: row.id });
  });
  api.patch('/:entity', (req, res, next) => {
    const entity = entityParam(req);
    if (entity === 'ContractServices') return next();
    if (entity !== 'Tickets') throw new AutotaskError(405, [`Updating ${entity} is not available in the sandbox.`]);
    const row = updateTicket(writeContext(res), bodyObject(req));
    res.json({ itemId: row.id });
  });
  for (const method of ['put', 'delete'] as const) {
    api[method]('/:entity{/:id}', (req) => {
      throw new AutotaskError(405, [`${req.method} ${entityParam(req)} is not available in the sandbox.`]);
    });
  }

  api.use((req, res) => {
    res.status(404).json({ errors: [`No resource at ${req.method} ${req.path}.`] });
  });
  api.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (err instanceof AutotaskError) {
      for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
      res.status(err.status).json({ errors: err.errors });
      return;
    }
    const e = err as { type?: string; status?: number; message?: string };
    if (e?.type === 'entity.parse.failed') {
      res.status(400).json({ errors: ['The request body is not valid JSON.'] });
      return;
    }
    res.status(500).json({ errors: [e?.message ?? 'Internal error'] });
  });
  return api;
}

export { ENTITIES };
export type { EntityName, FieldInfo };
