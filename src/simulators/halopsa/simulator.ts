/**
 * HaloPSA simulator, mounted at /sandbox-vendors/halopsa:
 *   POST /auth/token            client-credentials token (form body); the client id selects the instance
 *   GET  /api/authinfo          auth server discovery (no auth)
 *   GET  /api/Tickets[/id]      paged, lastupdatefromdate/lastupdatetodate on `last_update`, the documented
 *                               search_summary/search_details/datesearch filters; unknown parameters ignored
 *   POST /api/Tickets           array: element without id creates (summary, existing client_id), with id updates
 *   GET  /api/Projects[/id]     projects are tickets in Halo (`{record_count, tickets}`); POST as Tickets
 *   GET/POST /api/Actions       notes on a ticket or project (`ticket_id`); `new_status` moves the ticket;
 *                               time on an action: timetaken (hours), actisbillable, actionarrivaldate/actioncompletiondate
 *   GET  /api/Client[/id]       `{record_count, clients}`, lastupdatefromdate on `alastupdate`
 *   GET  /api/Users[/id]        contacts, `{record_count, users}`, lastupdatefromdate on `ulastupdate`
 *   GET  /api/Agent, /api/Status, /api/Priority, /api/Team   plain arrays
 *   GET  /api/ClientContract[/id]      `{record_count, contracts}` (inactive only with includeinactive)
 *   GET  /api/RecurringInvoice[/id]    `{record_count, invoices}`, `lines` with includelines=true
 *   POST /api/RecurringInvoice/Lines   InvoiceDetail array: without id adds a line to `ihid`, with id updates it
 *   GET  /api/Item[/id]                the item catalogue, `{record_count, items}` (inactive only with includeinactive)
 * A locked ticket or project (the baseline project) refuses API writes.
 */
import express, { type Router } from 'express';
import { FaultInjector, VendorClock, controlRouter, restoreTableState, tableState } from '../kit';
import http from 'node:http';
import { HaloTokens } from './auth';
import { addAction, createFault, createRecord, updateFault, updateRecord } from './mutations';
import { haloApiRouter } from './routes';
import { HaloInstance, clone, isHaloResource, type HaloRecord, type HaloResource } from './store';
import { grow } from './synthetic';
import type { HaloPsaSimulator } from './simulator-api';
import { simulateHaloPsa } from './simulate';

export type { HaloPsaSimulator } from './simulator-api';

export function createHaloPsaSimulator(opts: {
  controlToken?: string;
  /** A Halo-hosted instance: the token request must carry `?tenant=<this>`. */
  tenant?: string;
  /** client id -> secret and the instance it selects; defaults to the public sandbox client. */
  clients?: Record<string, { secret: string; instance: string }>;
} = {}): HaloPsaSimulator {
  // Injected faults in Halo's error body: the message as a JSON string (see ./errors.ts).
  const faults = new FaultInjector((status) => `${http.STATUS_CODES[status] ?? 'Error'}: injected fault`);
  const clock = new VendorClock();
  const tokens = new HaloTokens(opts.clients, undefined, opts.tenant);
  let instances = new Map<string, HaloInstance>();

  const instance = (name: string): HaloInstance => {
    let inst = instances.get(name);
    if (!inst) {
      inst = new HaloInstance();
      instances.set(name, inst);
    }
    return inst;
  };

  const resourceOf = (name: string): HaloResource => {
    if (!isHaloResource(name)) throw new Error(`unknown HaloPSA resource ${name}`);
    return name;
  };

  const sim: HaloPsaSimulator = {
    vendor: 'halopsa',
    faults,
    router: express.Router(),

    seed(name, fixtures) {
      const inst = new HaloInstance();
      for (const [key, records] of Object.entries(fixtures)) {
        if (key.startsWith('_')) continue;
        const resource = resourceOf(key);
        for (const rec of records) inst.insert(resource, clone(rec as HaloRecord));
      }
      instances.set(name, inst);
    },

    grow(name, resource, count) {
      grow(instance(name), resourceOf(resource), count, clock.now());
    },

    reset() {
      instances = new Map();
    },

    simulate(name, change) {
      return simulateHaloPsa(sim, name, change);
    },

    reserveIds(name, resource, above) {
      const halo = ({ tickets: 'tickets', companies: 'clients', contacts: 'users', projects: 'projects' } as Record<string, HaloResource>)[resource];
      if (halo) instance(name).reserveAbove(halo, above);
    },

    exportState(name) {
      return tableState(instances.get(name), clock);
    },

    importState(name, state) {
      restoreTableState(state, () => sim.seed(name, state.records), (space, above) => instance(name).reserveAbove(resourceOf(space), above), clock);
    },

    get(name, resource, id) {
      const rec = instance(name).table(resource).get(id);
      return rec ? clone(rec) : undefined;
    },

    list(name, resource) {
      return clone(instance(name).table(resource).rows);
    },

    update(name, resource, id, patch) {
      const inst = instance(name);
      if (resource === 'tickets' || resource === 'projects') {
        return clone(updateFault(inst, resource, Number(id), patch, clock.now(), false));
      }
      return clone(updateRecord(inst, resource, id, patch, clock.now()));
    },

    create(name, resource, record) {
      const inst = instance(name);
      if (resource === 'tickets' || resource === 'projects') return clone(createFault(inst, resource, record, clock.now()));
      return clone(createRecord(inst, resource, record, clock.now()));
    },

    addAction(name, ticketId, note) {
      const body = typeof note === 'string' ? { note } : note;
      return clone(addAction(instance(name), { ...body, ticket_id: ticketId }, clock.now(), false));
    },

    revokeTokens() {
      tokens.revokeAll();
    },
  };

  const router = sim.router as Router;
  router.use('/_control', controlRouter(sim, opts.controlToken));
  router.use(faults.middleware());
  tokens.revoked = (name) => faults.credentialsRevoked(name);
  router.post('/auth/token', express.urlencoded({ extended: false }), tokens.tokenHandler);
  // Halo's discovery document: where the authorisation server lives (clients append /token).
  router.get('/api/authinfo', (req, res) => {
    res.json({ auth_url: `${req.protocol}://${req.get('host')}${req.baseUrl}/auth` });
  });
  router.use('/api', tokens.requireBearer, haloApiRouter({ instance, clock }));
  return sim;
}
