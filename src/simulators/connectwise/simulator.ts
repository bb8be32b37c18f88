/**
 * ConnectWise PSA (Manage) simulator: the REST API 3.0 under `/v4_6_release/apis/3.0/`, in
 * ConnectWise's own shapes (Basic auth with companyId+publicKey:privateKey and a clientId header,
 * `conditions`/`orderBy`/`page`/`pageSize` lists with RFC 5988 Link headers, `/count`, JSON Patch
 * updates, `{code, message, errors}` error bodies). State is in memory, one dataset per instance.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import { controlRouter, FaultInjector, restoreTableState, tableState, VendorClock } from '../kit';
import { createAddition, patchAddition } from './agreement-additions';
import { CW_SECURITY_ROLES, memberOf, requireLevel } from './security-roles';
import { authenticate } from './auth';
import { badRequest, CwError, notFound } from './errors';
import { countRows, listPage } from './listing';
import { conditionFields } from './schema';
import { addProjectTicketNote, createTimeEntry } from './projects-and-time';
import { addCheckedProjectNote, createCheckedProjectTicket } from './project-rules';
import { resolveRef, uiActor } from './references';
import { clone, Instance, type CwRecord } from './store';
import type { ConnectWiseSimulator } from './simulator-api';
import { simulateConnectWise } from './simulate';
import { grow } from './synthetic';
import { addTicketNote, applyStatus, createTicket, newInfo, patchTicket, touch, type Change } from './tickets';

export type { ConnectWiseSimulator } from './simulator-api';

export const CW_API_BASE = '/v4_6_release/apis/3.0';

/** The identifier ConnectWise shows in `_info.updatedBy` for changes made through the API. */
const API_MEMBER = 'SandboxAPI';

function parseId(raw: unknown): number {
  const s = String(raw);
  if (!/^\d+$/.test(s)) throw badRequest(`'${s}' is not a valid id`);
  return Number(s);
}

export function createConnectWiseSimulator(opts: { controlToken?: string } = {}): ConnectWiseSimulator {
  const faults = new FaultInjector();
  const clock = new VendorClock();
  const instances = new Map<string, Instance>();

  function instanceOf(name: string): Instance {
    const inst = instances.get(name);
    if (!inst) throw new Error(`ConnectWise simulator has no instance '${name}'`);
    return inst;
  }
  const apiChange = (): Change => ({ by: API_MEMBER, at: clock.now() });
  const uiChange = (inst: Instance): Change => ({ by: uiActor(inst), at: clock.now() });

  // ---- HTTP API ----
  const api = express.Router();
  api.use((req: Request, res: Response, next: NextFunction) => {
    const clientId = req.get('clientId') ?? undefined;
    const name = authenticate(req.get('authorization'), clientId, instances);
    // The MSP revoked the API member's keys (POST /sandbox/simulate credentials_revoked): ConnectWise's 401.
    if (faults.credentialsRevoked(name)) throw new CwError(401, 'Unauthorized', 'The public and private key combination is not valid.');
    res.locals.cwInstance = instanceOf(name);
    next();
  });
  api.use(express.json({ limit: '1mb', type: ['application/json', 'application/*+json'] }));

  type Handler = (inst: Instance, req: Request, res: Response) => unknown;
  const handle = (fn: Handler) => (req: Request, res: Response) => {
    const out = fn(res.locals.cwInstance as Instance, req, res);
    if (out !== undefined && !res.headersSent) res.json(out);
  };
  const selfUrl = (req: Request) => new URL(req.originalUrl, `${req.protocol}://${req.get('host')}`);

  /** GET <path> (paged list) and GET <path>/count over the rows `rowsOf` picks. */
  function listRoutes(path: string, table: string, rowsOf: (inst: Instance, req: Request) => readonly CwRecord[]): void {
    // Conditions may name only the fields this resource has (schema.ts).
    const checkField = conditionFields(table);
    api.get(`${path}/count`, handle((inst, req) => ({ count: countRows(rowsOf(inst, req), req.query, checkField) })));
    api.get(path, handle((inst, req, res) => {
      const page = listPage(rowsOf(inst, req), req.query, selfUrl(req), checkField);
      if (page.link) res.setHeader('Link', page.link);
      return page.items;
    }));
  }
  function getRoute(path: string, resource: string, label: string, belongs?: (rec: CwRecord, req: Request) => boolean): void {
    api.get(path, handle((inst, req) => {
      const id = parseId(req.params.id);
      const rec = inst.table(resource).get(id);
      if (!rec || (belongs && !belongs(rec, req))) throw notFound(label, id);
      return rec;
    }));
  }
  const all = (resource: string) => (inst: Instance) => inst.table(resource).rows;
  /** Children of a parent record; 404 when the parent does not exist. */
  const childrenOf = (parent: string, parentLabel: string, child: string, parentIdOf: (rec: CwRecord) => unknown) =>
    (inst: Instance, req: Request) => {
      const pid = parseId(req.params.parentId);
      if (!inst.table(parent).get(pid)) throw notFound(parentLabel, pid);
      return inst.table(child).rows.filter((r) => parentIdOf(r) === pid);
    };

  // System: the calling API member and its security role's settings (the connect page's permission check).
  api.get('/system/myAccount', handle((_inst, req) => {
    const { member, securityRole } = memberOf(req.get('authorization'));
    return { id: member.id, identifier: member.identifier, firstName: 'API', lastName: member.identifier, securityRole: { id: securityRole.id, name: securityRole.name }, inactiveFlag: false };
  }));
  api.get('/system/securityRoles/:id/settings', handle((_inst, req) => {
    const r = CW_SECURITY_ROLES.find((x) => String(x.id) === req.params.id);
    if (!r) throw notFound('SecurityRole', parseId(req.params.id));
    return r.settings.map((s, i) => ({ id: r.id * 100 + i, ...s, moduleFunctionDescription: s.moduleFunctionName, myAllFlag: false, customFlag: false, reportFlag: false, restrictFlag: false }));
  }));

  // Service
  listRoutes('/service/tickets', 'tickets', all('tickets'));
  api.post('/service/tickets', handle((inst, _req, res) => {
    requireLevel(_req.get('authorization'), 'Service Desk', 'Service Tickets', 'addLevel');
    res.status(201);
    return createTicket(inst, _req.body, apiChange());
  }));
  getRoute('/service/tickets/:id', 'tickets', 'Ticket');
  api.patch('/service/tickets/:id', handle((inst, req) => patchTicket(inst, 'tickets', parseId(req.params.id), req.body, apiChange())));
  listRoutes('/service/tickets/:parentId/notes', 'ticket_notes', childrenOf('tickets', 'Ticket', 'ticket_notes', (n) => n.ticketId));
  api.post('/service/tickets/:parentId/notes', handle((inst, req, res) => {
    res.status(201);
    return addTicketNote(inst, parseId(req.params.parentId), req.body, apiChange());
  }));
  getRoute('/service/tickets/:parentId/notes/:id', 'ticket_notes', 'Note', (n, req) => n.ticketId === Number(req.params.parentId));

  listRoutes('/service/boards', 'boards', all('boards'));
  getRoute('/service/boards/:id', 'boards', 'Board');
  listRoutes('/service/boards/:parentId/statuses', 'statuses', childrenOf('boards', 'Board', 'statuses', (s) => s.board?.id));
  getRoute('/service/boards/:parentId/statuses/:id', 'statuses', 'Status', (s, req) => s.board?.id === Number(req.params.parentId));
  listRoutes('/service/priorities', 'priorities', all('priorities'));
  getRoute('/service/priorities/:id', 'priorities', 'Priority');

  // System, company
  listRoutes('/system/members', 'members', all('members'));
  getRoute('/system/members/:id', 'members', 'Member');
  listRoutes('/company/companies', 'companies', all('companies'));
  getRoute('/company/companies/:id', 'companies', 'Company');
  listRoutes('/company/contacts', 'contacts', all('contacts'));
  getRoute('/company/contacts/:id', 'contacts', 'Contact');

  // Finance
  listRoutes('/finance/agreements', 'agreements', all('agreements'));
  getRoute('/finance/agreements/:id', 'agreements', 'Agreement');
  listRoutes('/finance/agreements/:parentId/additions', 'additions', childrenOf('agreements', 'Agreement', 'additions', (a) => a.agreementId));
  getRoute('/finance/agreements/:parentId/additions/:id', 'additions', 'Addition', (a, req) => a.agreementId === Number(req.params.parentId));
  api.post('/finance/agreements/:parentId/additions', handle((inst, req, res) => {
    res.status(201);
    return createAddition(inst, parseId(req.params.parentId), req.body, apiChange());
  }));
  api.patch('/finance/agreements/:parentId/additions/:id', handle((inst, req) =>
    patchAddition(inst, parseId(req.params.parentId), parseId(req.params.id), req.body, apiChange())));

  // Procurement: the product catalogue (CatalogItem records).
  listRoutes('/procurement/catalog', 'catalog', all('catalog'));
  getRoute('/procurement/catalog/:id', 'catalog', 'Product');

  // Projects
  listRoutes('/project/projects', 'projects', all('projects'));
  getRoute('/project/projects/:id', 'projects', 'Project');
  listRoutes('/project/projects/:parentId/notes', 'project_notes', childrenOf('projects', 'Project', 'project_notes', (n) => n.projectId));
  api.post('/project/projects/:parentId/notes', handle((inst, req, res) => {
    res.status(201);
    return addCheckedProjectNote(inst, parseId(req.params.parentId), req.body, apiChange());
  }));
  listRoutes('/project/projects/:parentId/phases', 'project_phases', childrenOf('projects', 'Project', 'project_phases', (p) => p.projectId));
  getRoute('/project/projects/:parentId/phases/:id', 'project_phases', 'Phase', (p, req) => p.projectId === Number(req.params.parentId));
  listRoutes('/project/tickets', 'project_tickets', all('project_tickets'));
  api.post('/project/tickets', handle((inst, req, res) => {
    res.status(201);
    return createCheckedProjectTicket(inst, req.body, apiChange());
  }));
  getRoute('/project/tickets/:id', 'project_tickets', 'Ticket');
  listRoutes('/project/tickets/:parentId/notes', 'project_ticket_notes', childrenOf('project_tickets', 'Ticket', 'project_ticket_notes', (n) => n.ticketId));
  api.post('/project/tickets/:parentId/notes', handle((inst, req, res) => {
    res.status(201);
    return addProjectTicketNote(inst, parseId(req.params.parentId), req.body, apiChange());
  }));
  getRoute('/project/tickets/:parentId/notes/:id', 'project_ticket_notes', 'Note', (n, req) => n.ticketId === Number(req.params.parentId));
  api.patch('/project/tickets/:id', handle((inst, req) => patchTicket(inst, 'project_tickets', parseId(req.params.id), req.body, apiChange())));

  // Time
  listRoutes('/time/entries', 'time_entries', all('time_entries'));
  api.post('/time/entries', handle((inst, req, res) => {
    res.status(201);
    return createTimeEntry(inst, req.body, apiChange());
  }));
  getRoute('/time/entries/:id', 'time_entries', 'Time entry');

  const router = express.Router();
  // Control routes come before fault injection so that faults can always be cleared.
  router.use('/_control', controlRouter({ faults }, opts.controlToken));
  router.use(faults.middleware());
  // Codebase discovery, unauthenticated as in ConnectWise.
  router.get('/login/companyinfo/:companyId', (req, res) => {
    res.json({ CompanyName: req.params.companyId, Codebase: 'v4_6_release/', VersionCode: 'v2025.1', VersionNumber: 'v4.6', CompanyID: req.params.companyId, IsCloud: true });
  });
  router.use(CW_API_BASE, api);
  router.use((req: Request, res: Response) => {
    res.status(404).json({ code: 'NotFound', message: `No resource at ${req.method} ${req.path}` });
  });
  router.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (err instanceof CwError) {
      res.status(err.status).json(err.body());
      return;
    }
    const e = err as { type?: string; status?: number; message?: string };
    if (e?.type === 'entity.parse.failed') {
      res.status(400).json({ code: 'BadRequest', message: 'The request body is not valid JSON.' });
      return;
    }
    if (e?.status && e.status >= 400 && e.status < 500) {
      res.status(e.status).json({ code: 'BadRequest', message: e.message ?? 'Bad request' });
      return;
    }
    res.status(500).json({ code: 'UnexpectedError', message: (err as Error)?.message ?? 'Unexpected error' });
  });

  // ---- Programmatic API ----
  const sim: ConnectWiseSimulator = {
    vendor: 'connectwise',
    faults,
    router,

    seed(instance, fixtures) {
      const inst = new Instance();
      for (const [resource, records] of Object.entries(fixtures)) {
        if (resource.startsWith('_')) continue;
        for (const rec of [...records].sort((a, b) => Number((a as CwRecord).id) - Number((b as CwRecord).id))) {
          inst.insert(resource, clone(rec as CwRecord));
        }
      }
      instances.set(instance, inst);
    },

    grow(instance, resource, count) {
      const inst = instanceOf(instance);
      grow(inst, resource, count, clock.now(), uiActor(inst));
    },

    reset() {
      instances.clear();
      faults.clear();
      faults.resetLog();
    },

    get(instance, resource, id) {
      const rec = instanceOf(instance).table(resource).get(id);
      return rec ? clone(rec) : undefined;
    },

    list(instance, resource) {
      return clone(instanceOf(instance).table(resource).rows);
    },

    update(instance, resource, id, patch) {
      const inst = instanceOf(instance);
      const rec = inst.table(resource).get(id);
      if (!rec) throw new Error(`ConnectWise simulator: no ${resource} ${id} in ${instance}`);
      const change = uiChange(inst);
      const { status, ...rest } = clone(patch);
      Object.assign(rec, rest);
      if (status !== undefined && (resource === 'tickets' || resource === 'project_tickets')) {
        // In the UI a status change closes or reopens the ticket with it.
        const target = resolveRef(inst, 'statuses', status);
        if (!target) throw new Error(`ConnectWise simulator: unknown status ${JSON.stringify(status)}`);
        applyStatus(rec, target, change);
      } else if (status !== undefined) {
        rec.status = status;
      }
      touch(rec, change);
      return clone(rec);
    },

    create(instance, resource, record) {
      const inst = instanceOf(instance);
      const change = uiChange(inst);
      if (resource === 'tickets') return clone(createTicket(inst, record, change));
      const rec = clone(record);
      rec._info = { ...newInfo(change), ...(rec._info ?? {}) };
      return clone(inst.insert(resource, rec));
    },

    simulate(instance, change) {
      return simulateConnectWise(sim, instance, change);
    },

    reserveIds(instance, resource, above) {
      instanceOf(instance).reserveAbove(resource, above);
    },

    exportState(instance) {
      return tableState(instances.get(instance), clock);
    },

    importState(instance, state) {
      restoreTableState(state, () => sim.seed(instance, state.records), (space, above) => instanceOf(instance).reserveAbove(space, above), clock);
    },

    remove(instance, resource, id) {
      return instanceOf(instance).table(resource).remove(id);
    },

    addNote(instance, ticketId, text, flags = {}) {
      const inst = instanceOf(instance);
      return clone(addTicketNote(inst, ticketId, { text, ...flags }, uiChange(inst)));
    },
  };
  return sim;
}
