/**
 * N-able N-central simulator: the REST API (2023.9 and later) for the calls our connector makes, as
 * strict as the server. N-central publishes no central API description: each server serves its own
 * Swagger page (documentation.n-able.com, N-central user guide, "REST APIs"; developer.n-able.com,
 * N-central API reference); the endpoint list is mirrored by the public module PS-NCentral-RESTAPI
 * (N-central 2025.3.1.1) and the record shapes by npycentral's models (docs/vendors.md).
 *
 *   POST /api/auth/authenticate                 Authorization: Bearer <User-API Token (JWT)>; optional
 *                                               X-ACCESS-EXPIRY-OVERRIDE / X-REFRESH-EXPIRY-OVERRIDE
 *                                               ("120s", "30m", "1h"; never past the system setting)
 *   POST /api/auth/refresh                      body: the refresh token as text/plain
 *   GET  /api/auth/validate
 *   GET  /api/health                            unauthenticated
 *   GET  /api/service-orgs                      pageNumber, pageSize, sortBy, sortOrder
 *   GET  /api/customers                         pageNumber, pageSize, sortBy, sortOrder
 *   GET  /api/sites                             pageNumber, pageSize, sortBy, sortOrder
 *   GET  /api/devices                           pageNumber, pageSize, sortBy, sortOrder
 *   GET  /api/devices/{deviceId}
 *   GET  /api/devices/{deviceId}/assets
 *   GET  /api/org-units/{orgUnitId}/devices     pageNumber, pageSize
 *   GET  /api/org-units/{orgUnitId}/active-issues  pageNumber, pageSize
 *
 * Tokens ("Managing Authentication"): access tokens live 1 h and refresh tokens 25 h by default; a
 * refresh answers a new pair and the refresh token used is spent. Tokens are held in memory only
 * ("Known issues": a reboot of the server requires the token exchange again): `reboot()` drops them.
 *
 * Paging: `pageNumber` from 1, `pageSize` 1 to 1000 (default 50), anything else 400; lists answer
 * `{data, pageNumber, pageSize, itemCount, totalItems, totalPages, _links}`.
 *
 * Rate limiting ("Rate limiting"): per endpoint, a limit on requests in flight (3 to 50 depending on how
 * heavy the endpoint is); past it 429. The limits below are our reading of which endpoints are heavy
 * (the documentation names none): asset inventories and active issues 3, device lists 5, the rest 50.
 *
 * Errors: `{status, message}` (our reading; the server's Swagger page gives no error schema). "Known
 * issues": some errors of the core engine arrive as an error message in a 200 OK: the asset inventory
 * of a device whose asset discovery has not run answers 200 `{data: {}, _links: {}, errorMessage}` here,
 * and an injected fault of status 200 answers a list's envelope, empty, with `errorMessage`.
 *
 * A device has no online flag: an agent that stopped checking in shows as an active issue in state 7
 * (disconnected; npycentral's reading of notificationState), which `simulate` raises for device_offline.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import { randomBytes } from 'node:crypto';
import { FaultInjector, SimulationRefused, VendorClock, controlRouter, type SimulatedChange, type VendorSimulator } from '../kit';
import {
  NCENTRAL_RESOURCES, type NcActiveIssue, type NcCustomer, type NcDevice, type NcDeviceAssets, type NcResource, type NcServiceOrg, type NcSite,
} from './types';

export interface NcentralSimulatorOptions {
  controlToken?: string;
  /** User-API Token (JWT) -> the server's dataset it opens; defaults to the public sandbox token. */
  jwts?: Record<string, string>;
  /** The system-wide expiry settings (N-central: access 1 h, refresh 25 h). */
  accessTtlSeconds?: number;
  refreshTtlSeconds?: number;
  /** Requests in flight per endpoint before 429 (keys of ENDPOINT_LIMITS). */
  inFlight?: Partial<Record<EndpointKey, number>>;
}

export interface NcentralLimitStats {
  /** Requests answered 429 past an endpoint's limit. */
  throttled: number;
  /** The most requests in flight at once, per endpoint. */
  peakInFlight: Partial<Record<EndpointKey, number>>;
}

export interface NcentralSimulator extends VendorSimulator {
  list(instance: string, resource: 'devices'): NcDevice[];
  list(instance: string, resource: 'customers'): NcCustomer[];
  list(instance: string, resource: 'active-issues'): NcActiveIssue[];
  list(instance: string, resource: 'assets'): NcDeviceAssets[];
  list(instance: string, resource: NcResource): unknown[];
  updateDevice(instance: string, deviceId: number, patch: Partial<NcDevice>): NcDevice;
  /** An active issue on a device, as a failing service would raise it. */
  raiseIssue(instance: string, deviceId: number, serviceName: string, notificationState: number): NcActiveIssue;
  clearIssues(instance: string, deviceId: number): number;
  /** The server restarts: every access and refresh token is gone (only the User-API Token still works). */
  reboot(): void;
  expireTokens(): void;
  limitStats(): NcentralLimitStats;
}

/** The public development token of the sandbox's N-central server (a real one is a signed JWT). */
const DEFAULT_JWTS: Record<string, string> = { 'sandbox-gamma-user-api-token': 'sandbox-gamma' };
const ACCESS_TTL_S = 3600;
const REFRESH_TTL_S = 25 * 3600;
const PAGE_DEFAULT = 50;
const PAGE_MAX = 1000;

/** The endpoints with a limit of their own; every other path shares `other`. */
const ENDPOINT_LIMITS = { authenticate: 50, refresh: 50, devices: 5, assets: 3, 'active-issues': 3, customers: 50, other: 50 } as const;
export type EndpointKey = keyof typeof ENDPOINT_LIMITS;

function endpointOf(path: string): EndpointKey {
  if (path === '/api/auth/authenticate') return 'authenticate';
  if (path === '/api/auth/refresh') return 'refresh';
  if (/^\/api\/devices\/[^/]+\/assets$/.test(path)) return 'assets';
  if (/^\/api\/org-units\/[^/]+\/active-issues$/.test(path)) return 'active-issues';
  if (path === '/api/devices' || /^\/api\/org-units\/[^/]+\/devices$/.test(path)) return 'devices';
  if (path === '/api/customers') return 'customers';
  return 'other';
}

class BadRequest extends Error {}

function fail(res: Response, status: number, message: string): void {
  res.status(status).json({ status, message });
}

function q(req: Request, name: string): string | undefined {
  const v = (req.query as Record<string, unknown>)[name];
  return typeof v === 'string' ? v : undefined;
}

function intParam(req: Request, name: string, fallback: number, min: number, max: number): number {
  const raw = q(req, name);
  if (raw == null || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new BadRequest(`${name} must be an integer between ${min} and ${max}`);
  return n;
}

/** `(time)(unit)`, unit s, m or h ("Managing Authentication"); never past the system setting. */
function expiryOverride(raw: string | undefined, systemS: number, header: string): number {
  if (raw === undefined) return systemS;
  const m = /^(\d+)([smh])$/.exec(raw.trim());
  if (!m) throw new BadRequest(`${header} must be (time)(unit), e.g. 120s`);
  const s = Number(m[1]) * (m[2] === 'h' ? 3600 : m[2] === 'm' ? 60 : 1);
  if (s <= 0 || s > systemS) throw new BadRequest(`${header} cannot be longer than the system-wide setting (${systemS}s)`);
  return s;
}

function sendPage(req: Request, res: Response, rows: readonly unknown[]): void {
  const pageSize = intParam(req, 'pageSize', PAGE_DEFAULT, 1, PAGE_MAX);
  const pageNumber = intParam(req, 'pageNumber', 1, 1, Number.MAX_SAFE_INTEGER);
  const order = q(req, 'sortOrder')?.toLowerCase();
  if (order !== undefined && !['asc', 'ascending', 'natural', 'desc', 'descending', 'reverse'].includes(order)) throw new BadRequest('sortOrder must be asc or desc');
  const sorted = order === 'desc' || order === 'descending' || order === 'reverse' ? [...rows].reverse() : rows;
  const data = sorted.slice((pageNumber - 1) * pageSize, pageNumber * pageSize);
  const totalPages = Math.ceil(rows.length / pageSize);
  res.json({ data, pageNumber, pageSize, itemCount: data.length, totalItems: rows.length, totalPages, _links: {} });
}

class NcServer {
  serviceOrgs: NcServiceOrg[] = [];
  customers: NcCustomer[] = [];
  sites: NcSite[] = [];
  devices: NcDevice[] = [];
  issues: NcActiveIssue[] = [];
  assets = new Map<number, NcDeviceAssets>();

  device(id: number): NcDevice | undefined {
    return this.devices.find((d) => d.deviceId === id);
  }
  load(f: Record<string, unknown[]>): void {
    this.serviceOrgs = structuredClone((f['service-orgs'] ?? []) as NcServiceOrg[]);
    this.customers = structuredClone((f.customers ?? []) as NcCustomer[]);
    this.sites = structuredClone((f.sites ?? []) as NcSite[]);
    this.devices = structuredClone((f.devices ?? []) as NcDevice[]);
    this.issues = structuredClone((f['active-issues'] ?? []) as NcActiveIssue[]);
    this.assets = new Map(((f.assets ?? []) as NcDeviceAssets[]).map((a) => [a.deviceId, structuredClone(a)]));
  }
  rows(resource: NcResource): unknown[] {
    switch (resource) {
      case 'service-orgs': return this.serviceOrgs;
      case 'customers': return this.customers;
      case 'sites': return this.sites;
      case 'devices': return this.devices;
      case 'active-issues': return this.issues;
      case 'assets': return [...this.assets.values()];
    }
  }
  /** Whether a device sits under an org unit (its service organisation, customer or site). */
  under(d: NcDevice, orgUnitId: number): boolean {
    return d.soId === orgUnitId || d.customerId === orgUnitId || d.siteId === orgUnitId || d.orgUnitId === orgUnitId;
  }
  orgUnitExists(id: number): boolean {
    return this.serviceOrgs.some((s) => s.soId === id) || this.customers.some((c) => c.customerId === id) || this.sites.some((s) => s.siteId === id);
  }
}

export function createNcentralSimulator(opts: NcentralSimulatorOptions = {}): NcentralSimulator {
  // An injected 200 is the core engine's error attached to a 200 OK ("REST API known issues"): a list's
  // envelope, empty, with `errorMessage`.
  const faults = new FaultInjector((status) => (status === 200
    ? { data: [], pageNumber: 1, pageSize: PAGE_DEFAULT, itemCount: 0, totalItems: 0, totalPages: 0, errorMessage: 'Injected core engine error' }
    : { status, message: status === 429 ? 'Too many requests' : status === 503 ? 'Service Unavailable' : 'Injected fault' }));
  const clock = new VendorClock();
  const jwts = opts.jwts ?? DEFAULT_JWTS;
  const accessTtl = opts.accessTtlSeconds ?? ACCESS_TTL_S;
  const refreshTtl = opts.refreshTtlSeconds ?? REFRESH_TTL_S;
  const limits: Record<EndpointKey, number> = { ...ENDPOINT_LIMITS, ...opts.inFlight };
  const servers = new Map<string, NcServer>();
  const access = new Map<string, { instance: string; expiresAt: number }>();
  const refresh = new Map<string, { instance: string; expiresAt: number }>();
  const inFlight = new Map<EndpointKey, number>();
  let stats: NcentralLimitStats = { throttled: 0, peakInFlight: {} };
  faults.credentialOf = (req) => {
    const h = req.headers.authorization;
    return (h?.startsWith('Bearer ') && (access.get(h.slice(7))?.instance ?? jwts[h.slice(7)])) || 'default';
  };

  const serverOf = (name: string): NcServer => {
    let s = servers.get(name);
    if (!s) servers.set(name, (s = new NcServer()));
    return s;
  };
  const existing = (name: string): NcServer => {
    const s = servers.get(name);
    if (!s) throw new Error(`ncentral simulator: no server "${name}"`);
    return s;
  };
  const issue = (instance: string, accessS: number, refreshS: number) => {
    const a = randomBytes(24).toString('base64url');
    const r = randomBytes(24).toString('base64url');
    access.set(a, { instance, expiresAt: Date.now() + accessS * 1000 });
    refresh.set(r, { instance, expiresAt: Date.now() + refreshS * 1000 });
    return {
      tokens: { access: { token: a, type: 'Bearer', expirySeconds: accessS }, refresh: { token: r, type: 'Body', expirySeconds: refreshS } },
      refresh: '/api/auth/refresh', validate: '/api/auth/validate',
    };
  };
  const overrides = (req: Request) => ({
    a: expiryOverride(req.get('x-access-expiry-override'), accessTtl, 'X-ACCESS-EXPIRY-OVERRIDE'),
    r: expiryOverride(req.get('x-refresh-expiry-override'), refreshTtl, 'X-REFRESH-EXPIRY-OVERRIDE'),
  });

  const router = express.Router();
  const api = express.Router();
  router.use('/_control', controlRouter({ faults }, opts.controlToken));

  // Per-endpoint requests in flight, counted until the answer leaves (injected latency included).
  router.use((req: Request, res: Response, next: NextFunction) => {
    const key = endpointOf(req.path);
    const now = (inFlight.get(key) ?? 0) + 1;
    if (now > limits[key]) {
      stats.throttled++;
      fail(res, 429, `Too many requests: ${limits[key]} concurrent requests allowed for this endpoint`);
      return;
    }
    inFlight.set(key, now);
    stats.peakInFlight[key] = Math.max(stats.peakInFlight[key] ?? 0, now);
    let done = false;
    const end = () => { if (!done) { done = true; inFlight.set(key, (inFlight.get(key) ?? 1) - 1); } };
    res.once('finish', end);
    res.once('close', end);
    next();
  });
  router.use(faults.middleware());

  api.get('/health', (_req, res) => res.json({ currentTime: clock.now().toISOString(), status: 'OK' }));

  api.post('/auth/authenticate', (req, res) => {
    const h = req.headers.authorization;
    const instance = h?.startsWith('Bearer ') ? jwts[h.slice(7)] : undefined;
    if (!instance || faults.credentialsRevoked(instance)) return fail(res, 401, 'Authentication failed: the User-API Token is not valid');
    const o = overrides(req);
    res.json(issue(instance, o.a, o.r));
  });

  api.post('/auth/refresh', express.text({ type: '*/*' }), (req, res) => {
    const token = typeof req.body === 'string' ? req.body.trim() : '';
    const held = refresh.get(token);
    if (!held || held.expiresAt <= Date.now() || faults.credentialsRevoked(held.instance)) return fail(res, 401, 'Refresh token is not valid or has expired');
    const o = overrides(req);
    refresh.delete(token);
    res.json(issue(held.instance, o.a, o.r));
  });

  // Every other endpoint takes the access token.
  api.use((req, res, next) => {
    const h = req.headers.authorization;
    const held = h?.startsWith('Bearer ') ? access.get(h.slice(7)) : undefined;
    if (!held || held.expiresAt <= Date.now() || faults.credentialsRevoked(held.instance)) return fail(res, 401, 'Access token is not valid or has expired');
    res.locals.server = serverOf(held.instance);
    next();
  });
  const srv = (res: Response) => res.locals.server as NcServer;
  const idParam = (raw: string, what: string): number => {
    if (!/^\d+$/.test(raw)) throw new BadRequest(`${what} must be a number`);
    return Number(raw);
  };

  api.get('/auth/validate', (_req, res) => res.json({ message: 'The token is valid.' }));
  api.get('/service-orgs', (req, res) => sendPage(req, res, srv(res).serviceOrgs));
  api.get('/customers', (req, res) => sendPage(req, res, srv(res).customers));
  api.get('/sites', (req, res) => sendPage(req, res, srv(res).sites));
  api.get('/devices', (req, res) => sendPage(req, res, srv(res).devices));

  api.get('/devices/:deviceId', (req, res) => {
    const d = srv(res).device(idParam(req.params.deviceId, 'deviceId'));
    if (!d) return fail(res, 404, `Device ${req.params.deviceId} not found`);
    res.json({ data: d, _links: {} });
  });

  api.get('/devices/:deviceId/assets', (req, res) => {
    const s = srv(res);
    const id = idParam(req.params.deviceId, 'deviceId');
    const d = s.device(id);
    if (!d) return fail(res, 404, `Device ${id} not found`);
    const a = s.assets.get(id);
    if (!a || a.scanPending) {
      // The usual envelope, empty, with the core engine's message attached.
      res.json({ data: {}, _links: {}, errorMessage: `Unable to retrieve asset information for device ${id}: asset discovery has not completed.` });
      return;
    }
    res.json({
      data: {
        os: { reportedos: a.reportedos, osarchitecture: '64-bit', version: '' },
        device: { longname: d.longName, deviceid: String(d.deviceId), deviceclass: d.deviceClass, uri: d.uri, deleted: 'false' },
        application: { list: a.applications.map((x) => (x && typeof x === 'object' ? { _index: x._index, displayname: x.displayname } : x)) },
        _extra: { application: { list: a.applications }, patch: { list: a.patches }, customer: { customerid: String(d.customerId), customername: d.customerName } },
      },
      _links: {},
    });
  });

  api.get('/org-units/:orgUnitId/devices', (req, res) => {
    const s = srv(res);
    const id = idParam(req.params.orgUnitId, 'orgUnitId');
    if (!s.orgUnitExists(id)) return fail(res, 404, `Org unit ${id} not found`);
    sendPage(req, res, s.devices.filter((d) => s.under(d, id)));
  });

  api.get('/org-units/:orgUnitId/active-issues', (req, res) => {
    const s = srv(res);
    const id = idParam(req.params.orgUnitId, 'orgUnitId');
    if (!s.orgUnitExists(id)) return fail(res, 404, `Org unit ${id} not found`);
    sendPage(req, res, s.issues.filter((i) => { const d = s.device(i.deviceId); return d ? s.under(d, id) : false; }));
  });

  api.use((req: Request, res: Response) => fail(res, 404, `No endpoint ${req.method} /api${req.path}`));
  api.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (err instanceof BadRequest) return fail(res, 400, err.message);
    if (err instanceof SyntaxError) return fail(res, 400, 'Malformed request body');
    fail(res, 500, 'Internal Server Error');
  });
  router.use('/api', api);

  const sim: NcentralSimulator = {
    vendor: 'ncentral',
    faults,
    router,
    seed(instance, fixtures) {
      serverOf(instance).load(fixtures);
    },
    grow(instance, resource, n) {
      const s = serverOf(instance);
      if (resource !== 'devices') throw new Error(`ncentral simulator: cannot grow "${resource}"`);
      const base = s.devices[0];
      if (!base) throw new Error('ncentral simulator: grow needs a seeded device to copy');
      let id = s.devices.reduce((m, d) => Math.max(m, d.deviceId), 0);
      for (let i = 0; i < n; i++) {
        id++;
        s.devices.push({ ...structuredClone(base), deviceId: id, longName: `NSYN-${String(id).padStart(6, '0')}`, discoveredName: `NSYN-${id}`, uri: `10.99.${(id >> 8) & 255}.${id & 255}` });
      }
    },
    reset() {
      servers.clear();
      access.clear();
      refresh.clear();
      stats = { throttled: 0, peakInFlight: {} };
    },
    simulate(instance, change: SimulatedChange) {
      const s = existing(instance);
      if (change.kind === 'device_offline') {
        const online = (d: NcDevice) => !s.issues.some((i) => i.deviceId === d.deviceId && i.notificationState === 7);
        const d = change.target_id === undefined ? s.devices.find(online) : s.device(Number(change.target_id));
        if (!d) throw new SimulationRefused(change.target_id === undefined ? 'No online device to take offline.' : `No device ${change.target_id}.`);
        if (!online(d)) throw new SimulationRefused(`Device ${change.target_id} is already offline.`);
        sim.raiseIssue(instance, d.deviceId, 'Agent Status', 7);
        return { target_id: String(d.deviceId) };
      }
      if (change.kind === 'company_renamed') {
        const c = change.target_id === undefined ? s.customers[0] : s.customers.find((x) => String(x.customerId) === change.target_id);
        if (!c) throw new SimulationRefused(`No customer ${change.target_id ?? ''}.`.replace(' .', '.'));
        const name = change.name?.trim() || `${c.customerName} (renamed)`;
        c.customerName = name;
        for (const d of s.devices.filter((x) => x.customerId === c.customerId)) d.customerName = name;
        return { target_id: String(c.customerId) };
      }
      throw new SimulationRefused(`An RMM cannot make the change ${change.kind}.`);
    },
    list(instance: string, resource: NcResource): never {
      return structuredClone(existing(instance).rows(resource)) as never;
    },
    updateDevice(instance, deviceId, patch) {
      const d = existing(instance).device(deviceId);
      if (!d) throw new Error(`ncentral simulator: no device ${deviceId}`);
      Object.assign(d, patch);
      return structuredClone(d);
    },
    raiseIssue(instance, deviceId, serviceName, notificationState) {
      const s = existing(instance);
      const d = s.device(deviceId);
      if (!d) throw new Error(`ncentral simulator: no device ${deviceId}`);
      const taskId = s.issues.reduce((m, i) => Math.max(m, i.taskId), 900_000) + 1;
      const row: NcActiveIssue = {
        orgUnitId: d.siteId ?? d.customerId, deviceId, notificationState, serviceId: 1000 + (taskId % 97), serviceName, serviceType: 'Monitor',
        taskId, serviceItemId: taskId,
        _extra: { deviceName: d.longName, transitionTime: clock.now().toISOString(), customerTree: [d.soName, d.customerName, ...(d.siteName ? [d.siteName] : [])], soCustomerID: d.soId, numberOfActiveNotification: 0 },
      };
      s.issues.push(row);
      return structuredClone(row);
    },
    clearIssues(instance, deviceId) {
      const s = existing(instance);
      const before = s.issues.length;
      s.issues = s.issues.filter((i) => i.deviceId !== deviceId);
      return before - s.issues.length;
    },
    reboot() {
      access.clear();
      refresh.clear();
      inFlight.clear();
    },
    expireTokens() {
      for (const t of access.values()) t.expiresAt = 0;
    },
    limitStats() {
      return structuredClone(stats);
    },
    exportState(instance) {
      const s = servers.get(instance);
      if (!s) return undefined;
      const records = Object.fromEntries(NCENTRAL_RESOURCES.map((r) => [r, structuredClone(s.rows(r))]));
      return { records, issued: {}, extra: {}, clock: clock.lastStamp };
    },
    importState(instance, state) {
      sim.seed(instance, state.records);
      clock.continueAfter(state.clock);
    },
  };
  return sim;
}
