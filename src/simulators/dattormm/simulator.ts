/**
 * Datto RMM simulator: the API v2 shapes for the calls our connector makes (Datto RMM OpenAPI, build
 * 235, fixtures/vendor-api/dattormm; limits from the "Datto RMM API" help page, docs/vendors.md).
 *
 *   POST /auth/oauth/token                       Basic public-client:public; grant_type=password,
 *                                                username=<API key>, password=<API secret key>
 *   GET  /api/v2/account                         the account
 *   GET  /api/v2/account/sites                   page, max, siteName
 *   GET  /api/v2/account/devices                 page, max, hostname, siteName, operatingSystem
 *   GET  /api/v2/site/{siteUid}/devices          page, max
 *   GET  /api/v2/device/{deviceUid}
 *   GET  /api/v2/audit/device/{deviceUid}/software  page, max (400 for a device not of class `device`)
 *   GET  /api/v2/account/alerts/open|resolved    page, max, muted
 *   GET  /api/v2/account/components              page, max
 *   PUT  /api/v2/device/{deviceUid}/quickjob     CreateQuickJobRequest -> CreateQuickJobResponse
 *   GET  /api/v2/job/{jobUid}
 *   GET  /api/v2/activity-logs                   from (default: the last 15 minutes), until, entities,
 *                                                categories, siteIds, searchQuery (words, all must occur),
 *                                                size, order, page=next + searchAfter
 *   GET  /api/v2/system/request_rate             the account's count in the window and its limits
 *   GET  /api/v2/system/pagination               {max}
 *
 * Paging: `max` at most 250 (a larger one is cut to 250), `page` from 0; every list answers
 * `{pageDetails {count, totalCount, prevPageUrl, nextPageUrl}, <items>}` with absolute page URLs.
 *
 * Limits, per account (the API key selects it): 600 reads (GET) and 100 writes in any rolling 60 s;
 * past 90 % of either, each answer is held one second more; past the limit, 429. Every request counts,
 * refused ones included. The options scale them down for tests.
 *
 * A quick job on an online device runs at once (job `completed`; an "Install <software>" component makes
 * <software> show in the device's audit); on an offline device it waits until the device is back. Each
 * job is logged as a device activity of category `job` whose `details` is a JSON string with the job's
 * uid, name and status (our reading: the OpenAPI types `details` as a string and gives no example).
 *
 * Errors: the OpenAPI's ErrorResponse `{timestamp, status, error, path}`; OAuth errors `{error, error_description}`.
 */
import express, { type Request, type Response, type NextFunction } from 'express';
import http from 'node:http';
import { randomBytes, randomUUID } from 'node:crypto';
import { FaultInjector, SimulationRefused, VendorClock, controlRouter, type SimulatedChange, type VendorSimulator } from '../kit';
import { DattoAccount } from './store';
import { growDattoAccount } from './synthetic';
import { DATTO_RESOURCES, type DattoActivity, type DattoAlert, type DattoDevice, type DattoResource, type QuickJobRun } from './types';

export interface DattoRmmClient { secret: string; instance: string }

export interface DattoRmmLimits {
  windowSeconds: number;
  reads: number;
  writes: number;
  /** Share of a limit past which each answer is delayed. */
  cutOffRatio: number;
  delayMs: number;
}

export interface DattoRmmSimulatorOptions {
  controlToken?: string;
  /** API key -> its secret and the account it opens; defaults to the public sandbox key. */
  clients?: Record<string, DattoRmmClient>;
  /** Access token lifetime (Datto RMM: 100 hours). */
  tokenTtlSeconds?: number;
  limits?: Partial<DattoRmmLimits>;
}

export interface LimitStats {
  /** Requests answered 429 past a limit. */
  throttled: number;
  /** Answers held for the added delay past the cut-off. */
  delayed: number;
  /** The most reads counted in one window. */
  peakReads: number;
}

export interface DattoRmmSimulator extends VendorSimulator {
  readonly limits: DattoRmmLimits;
  list(instance: string, resource: 'devices'): DattoDevice[];
  list(instance: string, resource: 'alerts'): DattoAlert[];
  list(instance: string, resource: DattoResource): unknown[];
  /** Changes a device as the agent or a technician would (a device back online runs its waiting jobs). */
  updateDevice(instance: string, uid: string, patch: Partial<DattoDevice>): DattoDevice;
  removeDevice(instance: string, uid: string): boolean;
  raiseAlert(instance: string, deviceUid: string, diagnostics: string): DattoAlert;
  resolveAlert(instance: string, alertUid: string): boolean;
  /** Quick jobs received, in order. */
  runs(instance: string): QuickJobRun[];
  limitStats(instance: string): LimitStats;
  expireTokens(): void;
}

/** Public development key of the sandbox's Datto RMM account. */
const DEFAULT_CLIENTS: Record<string, DattoRmmClient> = { 'sandbox-beta': { secret: 'sandbox-secret', instance: 'sandbox-beta' } };
const DEFAULT_LIMITS: DattoRmmLimits = { windowSeconds: 60, reads: 600, writes: 100, cutOffRatio: 0.9, delayMs: 1000 };
/** Default and maximum `max` (GET /v2/system/pagination). */
const PAGE_MAX = 250;
/** The activity log's default `from`: the last 15 minutes (OpenAPI parameter description). */
const ACTIVITY_DEFAULT_MS = 15 * 60_000;
const ACTIVITY_DEFAULT_SIZE = 100;

class BadRequest extends Error {}

/**
 * The vendor's ErrorResponse {timestamp (epoch ms), status, error (reason phrase), path} (OpenAPI build 235);
 * `_why` documents the refusal here only: the vendor's body says no more than its status.
 */
function springError(req: Request, res: Response, status: number, _why: string): void {
  res.status(status).json(errorBody(status, req.path));
}

function errorBody(status: number, path: string): Record<string, unknown> {
  return { timestamp: Date.now(), status, error: http.STATUS_CODES[status] ?? 'Error', path };
}

function q(req: Request, name: string): string | undefined {
  const v = (req.query as Record<string, unknown>)[name];
  if (Array.isArray(v)) return v.map(String).join(',');
  return typeof v === 'string' ? v : undefined;
}

function intParam(req: Request, name: string, fallback: number, min: number): number {
  const raw = q(req, name);
  if (raw == null || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new BadRequest(`Invalid value of parameter ${name}`);
  return n;
}

/** The absolute URL of this request with some query parameters replaced. */
function selfUrl(req: Request, set: Record<string, string | number>): string {
  const u = new URL(`${req.protocol}://${req.get('host')}${req.originalUrl}`);
  for (const [k, v] of Object.entries(set)) u.searchParams.set(k, String(v));
  return u.href;
}

function sendPage(req: Request, res: Response, rows: readonly unknown[], field: string): void {
  const max = Math.min(intParam(req, 'max', PAGE_MAX, 1), PAGE_MAX);
  const page = intParam(req, 'page', 0, 0);
  const slice = rows.slice(page * max, page * max + max);
  const last = Math.max(0, Math.ceil(rows.length / max) - 1);
  res.json({
    pageDetails: {
      count: slice.length, totalCount: rows.length,
      prevPageUrl: page > 0 ? selfUrl(req, { page: Math.min(page - 1, last), max }) : null,
      nextPageUrl: page < last ? selfUrl(req, { page: page + 1, max }) : null,
    },
    [field]: slice,
  });
}

const likeFilter = (req: Request, name: string) => {
  const v = q(req, name)?.toLowerCase();
  return (s: string | undefined) => !v || (s ?? '').toLowerCase().includes(v);
};

export function createDattoRmmSimulator(opts: DattoRmmSimulatorOptions = {}): DattoRmmSimulator {
  const limits: DattoRmmLimits = { ...DEFAULT_LIMITS, ...opts.limits };
  const faults = new FaultInjector((status, req) => errorBody(status, req.path.replace(/^\/api/, '')));
  const clock = new VendorClock();
  const clients = opts.clients ?? DEFAULT_CLIENTS;
  const tokenTtl = opts.tokenTtlSeconds ?? 100 * 3600;
  const accounts = new Map<string, DattoAccount>();
  const tokens = new Map<string, { instance: string; expiresAt: number }>();
  const stats = new Map<string, LimitStats>();
  faults.credentialOf = (req) => {
    const h = req.headers.authorization;
    return (h?.startsWith('Bearer ') && tokens.get(h.slice(7))?.instance) || 'default';
  };

  const accountOf = (name: string): DattoAccount => {
    let a = accounts.get(name);
    if (!a) accounts.set(name, (a = new DattoAccount()));
    return a;
  };
  const existing = (name: string): DattoAccount => {
    const a = accounts.get(name);
    if (!a) throw new Error(`dattormm simulator: no account "${name}"`);
    return a;
  };
  const statsOf = (name: string): LimitStats => {
    let s = stats.get(name);
    if (!s) stats.set(name, (s = { throttled: 0, delayed: 0, peakReads: 0 }));
    return s;
  };
  const nowIso = () => clock.now().toISOString();

  const logJob = (a: DattoAccount, d: DattoDevice, run: QuickJobRun, action: string) => {
    const site = a.site(d.siteUid);
    a.activities.push({
      id: randomUUID(), entity: 'DEVICE', category: 'job', action, date: clock.now().getTime() / 1000,
      site: { id: site?.id ?? d.siteId, name: site?.name ?? d.siteName }, deviceId: d.id, hostname: d.hostname,
      user: { id: 1, userName: 'api-user', firstName: 'API', lastName: 'User' },
      details: JSON.stringify({ 'job.uid': run.job.uid, 'job.name': run.job.name, 'job.status': run.job.status, 'component.uid': run.componentUid }),
      hasStdOut: false, hasStdErr: false,
    });
  };
  /** The agent runs a job: completed, and an install component's software shows in the audit. */
  const runOnAgent = (a: DattoAccount, d: DattoDevice, run: QuickJobRun) => {
    run.done = true;
    run.job.status = 'completed';
    logJob(a, d, run, 'completed');
    const component = a.components.find((c) => c.uid === run.componentUid);
    const installs = component ? /^Install\s+(.+)$/i.exec(component.name)?.[1] : undefined;
    const rows = a.software.get(d.uid) ?? [];
    if (installs && !rows.some((r) => r.name === installs)) a.software.set(d.uid, [...rows, { name: installs, version: '1.0.0' }]);
    d.lastAuditDate = nowIso();
  };

  // --- HTTP ---------------------------------------------------------------------------------------

  const router = express.Router();
  const api = express.Router();

  router.use('/_control', controlRouter({ faults }, opts.controlToken));
  router.use(faults.middleware());

  router.post('/auth/oauth/token', express.urlencoded({ extended: false }), (req, res) => {
    const basic = req.headers.authorization?.startsWith('Basic ') ? Buffer.from(req.headers.authorization.slice(6), 'base64').toString('utf8') : null;
    if (basic !== 'public-client:public') {
      res.status(401).json({ error: 'unauthorized', error_description: 'Full authentication is required to access this resource' });
      return;
    }
    const body = (req.body ?? {}) as Record<string, string | undefined>;
    if (body.grant_type !== 'password') {
      res.status(400).json({ error: 'unsupported_grant_type', error_description: `Unsupported grant type: ${body.grant_type ?? ''}` });
      return;
    }
    const client = body.username != null ? clients[body.username] : undefined;
    if (!client || client.secret !== body.password || faults.credentialsRevoked(client.instance)) {
      res.status(400).json({ error: 'invalid_grant', error_description: 'Bad credentials' });
      return;
    }
    const token = randomBytes(24).toString('base64url');
    tokens.set(token, { instance: client.instance, expiresAt: Date.now() + tokenTtl * 1000 });
    res.json({ access_token: token, token_type: 'bearer', expires_in: tokenTtl, scope: 'default', jti: randomUUID() });
  });

  api.use((req, res, next) => {
    const h = req.headers.authorization;
    if (!h?.startsWith('Bearer ')) {
      res.status(401).json({ error: 'unauthorized', error_description: 'Full authentication is required to access this resource' });
      return;
    }
    const issued = tokens.get(h.slice(7));
    if (!issued || issued.expiresAt <= Date.now() || faults.credentialsRevoked(issued.instance)) {
      res.status(401).json({ error: 'invalid_token', error_description: `Invalid access token: ${h.slice(7, 15)}...` });
      return;
    }
    res.locals.instance = issued.instance;
    res.locals.account = accountOf(issued.instance);
    next();
  });

  // The account's request limits: every request counts; past the cut-off an added delay, past the limit 429.
  api.use((req: Request, res: Response, next: NextFunction) => {
    const a = res.locals.account as DattoAccount;
    const s = statsOf(res.locals.instance as string);
    const now = Date.now();
    const windowMs = limits.windowSeconds * 1000;
    const read = req.method === 'GET';
    const times = read ? a.readTimes : a.writeTimes;
    while (times.length > 0 && times[0] <= now - windowMs) times.shift();
    times.push(now);
    if (read) s.peakReads = Math.max(s.peakReads, times.length);
    const limit = read ? limits.reads : limits.writes;
    if (times.length > limit) {
      s.throttled++;
      springError(req, res, 429, `Request rate limit exceeded: ${limit} ${read ? 'read' : 'write'} requests per ${limits.windowSeconds} seconds`);
      return;
    }
    if (times.length > limit * limits.cutOffRatio) {
      s.delayed++;
      setTimeout(next, limits.delayMs);
      return;
    }
    next();
  });

  const acct = (res: Response) => res.locals.account as DattoAccount;
  const liveDevices = (a: DattoAccount) => a.devices.filter((d) => d.deleted !== true);

  api.get('/v2/account', (_req, res) => {
    const a = acct(res);
    const devices = liveDevices(a);
    res.json({
      id: 1, uid: a.uid, name: 'Sandbox Datto RMM account', currency: 'USD',
      descriptor: { billingEmail: 'billing@example.invalid', deviceLimit: 0, timeZone: 'UTC' },
      devicesStatus: { numberOfDevices: devices.length, numberOfOnlineDevices: devices.filter((d) => d.online).length, numberOfOfflineDevices: devices.filter((d) => !d.online).length, numberOfOnDemandDevices: 0, numberOfManagedDevices: devices.length },
    });
  });

  api.get('/v2/account/sites', (req, res) => {
    const name = likeFilter(req, 'siteName');
    sendPage(req, res, acct(res).sites.filter((s) => name(s.name)), 'sites');
  });

  api.get('/v2/account/devices', (req, res) => {
    const [host, site, os] = [likeFilter(req, 'hostname'), likeFilter(req, 'siteName'), likeFilter(req, 'operatingSystem')];
    sendPage(req, res, liveDevices(acct(res)).filter((d) => host(d.hostname) && site(d.siteName) && os(d.operatingSystem)), 'devices');
  });

  api.get('/v2/site/:siteUid/devices', (req, res) => {
    const a = acct(res);
    if (!a.site(req.params.siteUid)) return springError(req, res, 404, 'Site or filter not found.');
    sendPage(req, res, liveDevices(a).filter((d) => d.siteUid === req.params.siteUid), 'devices');
  });

  api.get('/v2/device/:deviceUid', (req, res) => {
    const d = acct(res).device(req.params.deviceUid);
    if (!d || d.deleted) return springError(req, res, 404, 'Device was not found.');
    res.json(d);
  });

  api.get('/v2/audit/device/:deviceUid/software', (req, res) => {
    const a = acct(res);
    const d = a.device(req.params.deviceUid);
    if (!d || d.deleted) return springError(req, res, 404, 'Device was not found.');
    if (d.deviceClass !== 'device') return springError(req, res, 400, 'The device identified by the given device UID is not of class device.');
    sendPage(req, res, a.software.get(d.uid) ?? [], 'software');
  });

  const alerts = (resolved: boolean) => (req: Request, res: Response) => {
    const muted = q(req, 'muted');
    sendPage(req, res, acct(res).alerts.filter((x) => x.resolved === resolved && (muted == null || String(x.muted === true) === muted)), 'alerts');
  };
  api.get('/v2/account/alerts/open', alerts(false));
  api.get('/v2/account/alerts/resolved', alerts(true));

  api.get('/v2/account/components', (req, res) => sendPage(req, res, acct(res).components, 'components'));

  api.put('/v2/device/:deviceUid/quickjob', express.json(), (req, res) => {
    const a = acct(res);
    const d = a.device(req.params.deviceUid);
    if (!d || d.deleted) return springError(req, res, 404, 'Device was not found.');
    const body = (req.body ?? {}) as { jobName?: unknown; jobComponent?: { componentUid?: unknown; variables?: unknown } };
    const component = a.components.find((c) => c.uid === body.jobComponent?.componentUid);
    const vars = body.jobComponent?.variables ?? [];
    const known = new Set((component?.variables ?? []).map((v) => v.name));
    const badVar = Array.isArray(vars) ? vars.find((v: { name?: unknown }) => typeof v?.name !== 'string' || !known.has(v.name)) : true;
    if (typeof body.jobName !== 'string' || body.jobName.trim() === '' || !component || badVar) {
      return springError(req, res, 400, 'Request data is invalid.');
    }
    const job = { id: a.runs.length + 1, uid: randomUUID(), name: body.jobName, dateCreated: nowIso(), status: 'active' as const };
    const run: QuickJobRun = { job, deviceUid: d.uid, componentUid: component.uid, done: false };
    a.runs.push(run);
    logJob(a, d, run, 'deployment');
    if (d.online) runOnAgent(a, d, run);
    res.json({ job: { ...job, status: 'active' }, jobComponents: [{ uid: component.uid, name: component.name, variables: Array.isArray(vars) ? vars : [] }] });
  });

  api.get('/v2/job/:jobUid', (req, res) => {
    const run = acct(res).runs.find((r) => r.job.uid === req.params.jobUid);
    if (!run) return springError(req, res, 404, 'Job was not found.');
    res.json(run.job);
  });

  api.get('/v2/activity-logs', (req, res) => {
    const a = acct(res);
    const list = (name: string) => q(req, name)?.split(',').map((x) => x.trim()).filter(Boolean) ?? [];
    const from = q(req, 'from') ? Date.parse(q(req, 'from')!) : Date.now() - ACTIVITY_DEFAULT_MS;
    const until = q(req, 'until') ? Date.parse(q(req, 'until')!) : Infinity;
    if (Number.isNaN(from) || Number.isNaN(until)) throw new BadRequest('Request parameters are invalid.');
    const order = q(req, 'order') ?? 'desc';
    if (order !== 'asc' && order !== 'desc') throw new BadRequest('Request parameters are invalid.');
    const size = intParam(req, 'size', ACTIVITY_DEFAULT_SIZE, 1);
    const [entities, categories, siteIds] = [list('entities').map((e) => e.toUpperCase()), list('categories'), list('siteIds').map(Number)];
    const words = (q(req, 'searchQuery') ?? '').toLowerCase().split(/\s+/).filter(Boolean);
    const rows = a.activities
      .filter((x) => words.every((w) => `${x.details} ${x.hostname}`.toLowerCase().includes(w)))
      .filter((x) => x.date * 1000 >= from && x.date * 1000 <= until)
      .filter((x) => (entities.length === 0 || entities.includes(x.entity)) && (categories.length === 0 || categories.includes(x.category)) && (siteIds.length === 0 || siteIds.includes(x.site.id)))
      .sort((x, y) => (order === 'asc' ? x.date - y.date : y.date - x.date));
    const pageDir = q(req, 'page');
    const after = pageDir === 'next' || pageDir === 'previous' ? Number(q(req, 'searchAfter') ?? 0) : 0;
    const start = Math.max(0, pageDir === 'previous' ? after - 2 * size : after) || 0;
    const slice = rows.slice(start, start + size);
    res.json({
      pageDetails: {
        count: slice.length, totalCount: rows.length,
        prevPageUrl: start > 0 ? selfUrl(req, { page: 'previous', searchAfter: start + size }) : null,
        nextPageUrl: start + size < rows.length ? selfUrl(req, { page: 'next', searchAfter: start + size }) : null,
      },
      activities: slice,
    });
  });

  api.get('/v2/system/request_rate', (_req, res) => {
    const a = acct(res);
    res.json({
      slidingTimeWindowSizeSeconds: limits.windowSeconds, accountUid: a.uid, accountCount: a.readTimes.length, accountRateLimit: limits.reads,
      accountCutOffRatio: limits.cutOffRatio, accountWriteRateLimit: limits.writes, accountWriteCount: a.writeTimes.length, operationWriteStatus: {},
    });
  });
  api.get('/v2/system/pagination', (_req, res) => res.json({ max: PAGE_MAX }));

  api.use((req: Request, res: Response) => springError(req, res, 404, 'No static resource found.'));
  api.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (err instanceof BadRequest) return springError(req, res, 400, err.message);
    if (err instanceof SyntaxError) return springError(req, res, 400, 'Request data is invalid.');
    springError(req, res, 500, 'Internal Server Error');
  });
  router.use('/api', api);

  const sim: DattoRmmSimulator = {
    vendor: 'dattormm',
    faults,
    router,
    limits,
    seed(instance, fixtures) {
      const a = accountOf(instance);
      a.load(fixtures);
      a.readTimes = [];
      a.writeTimes = [];
      stats.delete(instance);
    },
    grow(instance, resource, n) {
      if (!(DATTO_RESOURCES as readonly string[]).includes(resource)) throw new Error(`dattormm simulator: cannot grow "${resource}"`);
      growDattoAccount(accountOf(instance), resource as DattoResource, n, nowIso());
    },
    reset() {
      accounts.clear();
      tokens.clear();
      stats.clear();
    },
    simulate(instance, change: SimulatedChange) {
      if (change.kind !== 'device_offline') throw new SimulationRefused(`An RMM cannot make the change ${change.kind}.`);
      const a = existing(instance);
      const d = change.target_id === undefined ? liveDevices(a).find((x) => x.online) : a.device(change.target_id);
      if (!d || d.deleted) throw new SimulationRefused(change.target_id === undefined ? 'No online device to take offline.' : `No device ${change.target_id}.`);
      if (!d.online) throw new SimulationRefused(`Device ${change.target_id} is already offline.`);
      sim.updateDevice(instance, d.uid, { online: false });
      return { target_id: d.uid };
    },
    list(instance: string, resource: DattoResource): never {
      const a = existing(instance);
      const rows = resource === 'software' ? [...a.software].map(([deviceUid, software]) => ({ deviceUid, software })) : a[resource];
      return structuredClone(rows) as never;
    },
    updateDevice(instance, uid, patch) {
      const a = existing(instance);
      const d = a.device(uid);
      if (!d) throw new Error(`dattormm simulator: no device "${uid}"`);
      const wasOnline = d.online;
      Object.assign(d, patch, { lastAuditDate: nowIso() });
      if (!wasOnline && d.online) for (const run of a.runs.filter((r) => r.deviceUid === uid && !r.done)) runOnAgent(a, d, run);
      return structuredClone(d);
    },
    removeDevice(instance, uid) {
      const a = existing(instance);
      const before = a.devices.length;
      a.devices = a.devices.filter((d) => d.uid !== uid);
      a.software.delete(uid);
      return a.devices.length < before;
    },
    raiseAlert(instance, deviceUid, diagnostics) {
      const a = existing(instance);
      const d = a.device(deviceUid);
      if (!d) throw new Error(`dattormm simulator: no device "${deviceUid}"`);
      const alert: DattoAlert = {
        alertUid: randomUUID(), priority: 'High', diagnostics, resolved: false, muted: false, timestamp: nowIso(),
        alertContext: { '@class': 'online_offline_status_ctx', status: 'OFFLINE' },
        alertSourceInfo: { deviceUid: d.uid, deviceName: d.hostname, siteUid: d.siteUid, siteName: d.siteName },
      };
      a.alerts.push(alert);
      d.lastSeen = nowIso(); // the agent reported the condition
      return structuredClone(alert);
    },
    resolveAlert(instance, alertUid) {
      const alert = existing(instance).alerts.find((x) => x.alertUid === alertUid && !x.resolved);
      if (!alert) return false;
      Object.assign(alert, { resolved: true, resolvedBy: 'sandbox', resolvedOn: nowIso() });
      const d = existing(instance).device(alert.alertSourceInfo.deviceUid);
      if (d) d.lastSeen = nowIso(); // the agent reported the condition cleared
      return true;
    },
    runs(instance) {
      return structuredClone(accounts.get(instance)?.runs ?? []);
    },
    exportState(instance) {
      const a = accounts.get(instance);
      if (!a) return undefined;
      const records = Object.fromEntries(DATTO_RESOURCES.map((r) => [r, sim.list(instance, r) as unknown[]]));
      // Job runs and the activity log are no seed resources; the request windows are the process's (not kept).
      return { records, issued: {}, extra: { accountUid: a.uid, runs: structuredClone(a.runs), activities: structuredClone(a.activities) }, clock: clock.lastStamp };
    },
    importState(instance, state) {
      sim.seed(instance, state.records);
      const a = existing(instance);
      const { accountUid, runs, activities } = state.extra;
      if (typeof accountUid === 'string') a.uid = accountUid;
      if (Array.isArray(runs)) a.runs = runs as QuickJobRun[];
      if (Array.isArray(activities)) a.activities = activities as DattoActivity[];
      clock.continueAfter(state.clock);
    },
    limitStats(instance) {
      return { ...statsOf(instance) };
    },
    expireTokens() {
      tokens.clear();
    },
  };
  return sim;
}
