/**
 * Kaseya BMS simulator ("BMS API 2.0"), mounted at /sandbox-vendors/kaseyabms:
 *   POST /v2/security/authenticate      form: GrantType=password, UserName, Password, Tenant (the company name)
 *   POST /v2/security/refreshtoken      form: AccessToken, RefreshToken
 *   GET  /v2/security/userinfo          the user and its access rights
 *   GET/POST /v2/servicedesk/tickets, GET/PATCH /v2/servicedesk/tickets/{ticketId} (JSON Patch), POST .../resolve
 *   GET/POST .../tickets/{ticketId}/notes, GET/POST .../tickets/{ticketId}/timelogs
 *   GET  /v2/system/{statuses,priorities,queues,roles}/lookup, /v2/hr/employees/lookup
 *   GET  /v2/crm/accounts/summary, /v2/crm/accounts/{accountId}/locations/lookup, /v2/crm/contacts/summary
 *   GET  /v2/finance/contracts/summary, POST /v2/finance/contracts/recurringservices/{contractId}/services
 *   GET  /v2/admin/finance/services/lookup, /v2/project/projects/summary
 * Every answer is the envelope at 200 (a refusal is `Success: false`); an unknown or expired token is
 * ASP.NET's bare 401; 1,500 requests an hour per endpoint (./limits.ts), then 429.
 */
import express, { type Router } from 'express';
import { FaultInjector, VendorClock, controlRouter, restoreTableState, tableState } from '../kit';
import { BmsTokens, SANDBOX_USERS, type BmsUser } from './auth';
import { EndpointLimiter } from './limits';
import { addNote, applyUiChange } from './mutations';
import { bmsApiRouter } from './routes';
import { simulateKaseyaBms } from './simulate';
import type { KaseyaBmsSimulator } from './simulator-api';
import { BmsInstance, bmsTime, clone, isBmsResource, type BmsRecord, type BmsResource } from './store';

export type { KaseyaBmsSimulator } from './simulator-api';

export function createKaseyaBmsSimulator(opts: { controlToken?: string; users?: Record<string, BmsUser>; now?: () => number } = {}): KaseyaBmsSimulator {
  // An injected fault in the envelope (the status stays the fault's: a throttle or an outage is not a 200).
  const faults = new FaultInjector((status) => ({
    Success: false, Error: { Code: status, Message: status === 429 ? 'API call limit exceeded.' : 'The service is unavailable.', Details: null, StackStrace: null, SubErrors: [] }, Result: null,
  }));
  const clock = new VendorClock(opts.now);
  const tokens = new BmsTokens(opts.users ?? SANDBOX_USERS, opts.now);
  const limiter = new EndpointLimiter((req) => tokens.instanceOf(req.headers.authorization), undefined, opts.now);
  let instances = new Map<string, BmsInstance>();

  const fresh = (): BmsInstance => {
    const inst = new BmsInstance();
    inst.stamp = () => bmsTime(clock.now());
    return inst;
  };
  const instance = (name: string): BmsInstance => {
    let inst = instances.get(name);
    if (!inst) instances.set(name, (inst = fresh()));
    return inst;
  };
  const resourceOf = (name: string): BmsResource => {
    if (!isBmsResource(name)) throw new Error(`unknown Kaseya BMS resource ${name}`);
    return name;
  };
  const record = (name: string, resource: BmsResource, id: number): BmsRecord => {
    const rec = instance(name).get(resource, id);
    if (!rec) throw new Error(`no ${resource} ${id}`);
    return rec;
  };

  const sim: KaseyaBmsSimulator = {
    vendor: 'kaseyabms',
    faults,
    limiter,
    router: express.Router(),
    seed(name, fixtures) {
      const inst = fresh();
      for (const [key, records] of Object.entries(fixtures)) {
        if (key.startsWith('_')) continue;
        for (const rec of records) inst.insert(resourceOf(key), clone(rec as BmsRecord));
      }
      instances.set(name, inst);
    },
    grow() {
      // Benchmarks grow the other PSAs; BMS's sandbox stays at its fixtures.
    },
    reset() {
      instances = new Map();
      limiter.reset();
    },
    simulate(name, change) {
      return simulateKaseyaBms(sim, name, change);
    },
    reserveIds(name, resource, above) {
      const bms = ({ tickets: 'tickets', companies: 'accounts', contacts: 'contacts', projects: 'projects' } as Record<string, BmsResource>)[resource];
      if (bms) instance(name).reserveAbove(bms, above);
    },
    exportState(name) {
      return tableState(instances.get(name), clock);
    },
    importState(name, state) {
      restoreTableState(state, () => sim.seed(name, state.records), (space, above) => instance(name).reserveAbove(resourceOf(space), above), clock);
    },
    get(name, resource, id) {
      const rec = instance(name).get(resource, id);
      return rec ? clone(rec) : undefined;
    },
    list(name, resource) {
      return clone(instance(name).table(resource));
    },
    update(name, resource, id, patch) {
      return clone(applyUiChange(instance(name), resource, record(name, resource, id), patch));
    },
    addNote(name, ticketId, text) {
      const inst = instance(name);
      const user = inst.table('employees')[0]?.UserName ?? 'sandbox';
      return clone(addNote(inst, record(name, 'tickets', ticketId), { Details: text, IsInternal: false, TypeId: 1, NoteDate: bmsTime(clock.now()) }, user));
    },
    revokeTokens() {
      tokens.revokeAll();
    },
  };

  const router = sim.router as Router;
  router.use('/_control', controlRouter(sim, opts.controlToken));
  faults.credentialOf = (req) => tokens.instanceOf(req.headers.authorization) ?? 'default';
  router.use(faults.middleware());
  tokens.revoked = (name) => faults.credentialsRevoked(name);
  // The document gives the two token operations multipart/form-data; ASP.NET's [FromForm] binds a
  // urlencoded form the same way, so both are taken.
  const form = [express.urlencoded({ extended: false }), multipartFields];
  router.post('/v2/security/authenticate', ...form, tokens.authenticate);
  router.post('/v2/security/refreshtoken', ...form, tokens.refresh);
  router.use('/v2', tokens.requireBearer, limiter.middleware(), bmsApiRouter({ instance, clock }));
  return sim;
}

/** A small multipart/form-data reader for the token operations' text fields (no files are sent there). */
function multipartFields(req: express.Request, _res: express.Response, next: express.NextFunction): void {
  const type = req.headers['content-type'] ?? '';
  const boundary = /multipart\/form-data;\s*boundary=("?)([^";]+)\1/i.exec(type)?.[2];
  if (!boundary) return next();
  let raw = '';
  req.setEncoding('utf8');
  req.on('data', (c: string) => { raw += c; if (raw.length > 64_000) req.destroy(); });
  req.on('end', () => {
    const fields: Record<string, string> = {};
    for (const part of raw.split(`--${boundary}`)) {
      const split = part.indexOf('\r\n\r\n');
      const name = split < 0 ? undefined : /name="([^"]+)"/.exec(part.slice(0, split))?.[1];
      if (name) fields[name] = part.slice(split + 4).replace(/\r\n$/, '');
    }
    req.body = fields;
    next();
  });
}
