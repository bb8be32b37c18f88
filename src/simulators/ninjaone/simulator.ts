/**
 * NinjaOne RMM simulator: the v2 public API's shapes for the reads our connector makes.
 *
 *   GET  /ws/oauth/authorize        the consent page (authorization code, PKCE optional); its form POSTs back
 *   POST /ws/oauth/token            client_credentials, authorization_code or refresh_token
 *                                   -> {access_token, token_type, expires_in, scope[, refresh_token]}
 *   GET  /v2/organizations          pageSize, after (last id)
 *   GET  /v2/organization/{id}
 *   GET  /v2/devices                pageSize, after, df   (basic node fields)
 *   GET  /v2/devices-detailed       pageSize, after, df   (+ os, system, addresses, ...)
 *   GET  /v2/device/{id}
 *   GET  /v2/queries/software       pageSize, cursor, df, installedBefore, installedAfter
 *   GET  /v2/queries/os-patches     pageSize, cursor, df, status, type, severity
 *   GET  /v2/alerts                 df, sourceType (not paginated)
 *   GET  /v2/automation/scripts     the script catalogue (not paginated)
 *   GET  /v2/device/{id}/activities activityType, olderThan, newerThan, pageSize (10..1000)
 *   POST /v2/device/{id}/script/run RunScriptRequest {type, id, uid, parameters, runAs}
 *
 * A script run on an online device runs at once (START_REQUESTED then COMPLETED activities; an
 * install script, "Install <software>", makes <software> show in /v2/queries/software). On an offline
 * device the run is accepted and waits: it runs when the device comes back online. `runs` counts
 * every run received, so tests can assert exactly-once.
 *
 * NinjaOne has no last-updated filter on any of these (checked against the public OpenAPI
 * document, v2.0.9): the only `updatedAfter` parameters are on the custom-field queries.
 * The client id selects the instance: `sandbox` -> sandbox-alpha, `sandbox-beta` -> sandbox-beta.
 *
 * User context: a client-credentials token has none, and NinjaOne refuses it on script/run with
 * `{"error":"user_context_required","error_description":"Access key does not have user context which
 * is required for this request","error_code":5}` (homotechsual/NinjaOne issue 90; NangoHQ/nango PR 5429:
 * running scripts needs the authorization-code grant). The HTTP status is not published: 403 here. A
 * token from the authorization_code grant, or from the refresh_token grant of such an authorisation,
 * carries the authorising user's context. The sandbox's user is signed in already and approves on the
 * consent page, and each client starts with one refresh token, as if its MSP had authorised (`refreshToken`). Refresh
 * tokens are not rotated on use (whether NinjaOne rotates them is unconfirmed).
 */
import express, { type Request, type Response } from 'express';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { NinjaOneSimulator } from './simulator-api';
import { simulateNinjaOne } from './simulate';
import { FaultInjector, VendorClock, controlRouter, statusName } from '../kit';
import { setPageHeaders } from '../../pages/page-headers';
import http from 'node:http';
import { DeviceFilterError, parseDeviceFilter, type DevicePredicate } from './device-filter';
import { NinjaInstance, pageAfter, type QueryCursor, type ScriptRun } from './store';
import { growNinjaInstance } from './synthetic';
import {
  NINJA_RESOURCES, type NinjaAlert, type NinjaDevice, type NinjaOsPatch, type NinjaRecordByResource,
  type NinjaResource, type NinjaSoftware, type NinjaScript, type NinjaActivity,
} from './types';

export type { NinjaOneSimulator } from './simulator-api';

export interface NinjaOneClient {
  secret: string;
  instance: string;
  /** The refresh token of the client's authorisation by a NinjaOne user (sandbox: public, like the secret). */
  refreshToken?: string;
  /** Redirect URIs registered in the client's NinjaOne API application; absent: any http(s) URL (sandbox). */
  redirectUris?: string[];
}

/** Public development refresh tokens of the sandbox's NinjaOne clients (a user's authorisation, with the control scope). */
export const NINJAONE_SANDBOX_REFRESH_TOKENS: Record<string, string> = {
  sandbox: 'sandbox-refresh-token',
  'sandbox-beta': 'sandbox-beta-refresh-token',
};

export interface NinjaOneSimulatorOptions {
  controlToken?: string;
  /** client id -> secret and instance; defaults to the public sandbox credentials. */
  clients?: Record<string, NinjaOneClient>;
  /** Access token lifetime (NinjaOne issues 3600 s tokens). */
  tokenTtlSeconds?: number;
}

const DEFAULT_CLIENTS: Record<string, NinjaOneClient> = {
  sandbox: { secret: 'sandbox-secret', instance: 'sandbox-alpha', refreshToken: NINJAONE_SANDBOX_REFRESH_TOKENS.sandbox },
  'sandbox-beta': { secret: 'sandbox-secret', instance: 'sandbox-beta', refreshToken: NINJAONE_SANDBOX_REFRESH_TOKENS['sandbox-beta'] },
};
const SCOPES = new Set(['monitoring', 'management', 'control', 'offline_access']);
/** Credential roles a run may name (RunScriptRequest.runAs); NinjaOne also takes a credential id. */
const RUN_AS_ROLES = new Set(['system', 'SYSTEM', 'LOGGED_ON_USER', 'LOCAL_ADMIN', 'DOMAIN_ADMIN']);
/** GET /v2/device/{id}/activities pageSize: minimum 10, maximum 1000, default 200 (OpenAPI 2.0.9). */
const ACTIVITY_PAGE = { min: 10, max: 1000, default: 200 };
/** Report cursors: NinjaOne does not document their lifetime; ten minutes is ample for a sync. */
const CURSOR_TTL_MS = 10 * 60_000;
/** Query endpoints: sibling /v2/queries/* document default 1000, maximum 10000. */
const QUERY_DEFAULT_PAGE = 1000;
const QUERY_MAX_PAGE = 10_000;

/** Fields of /v2/devices (NodeWithDetailedReferences); /v2/devices-detailed returns the whole Device. */
const BASIC_DEVICE_FIELDS = [
  'id', 'uid', 'assignedOwnerUid', 'parentDeviceId', 'organizationId', 'locationId', 'nodeClass', 'nodeRoleId',
  'rolePolicyId', 'policyId', 'approvalStatus', 'offline', 'displayName', 'systemName', 'dnsName', 'netbiosName',
  'created', 'lastContact', 'lastUpdate', 'userData', 'tags', 'fields', 'maintenance', 'references',
] as const;

function basicDevice(d: NinjaDevice): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of BASIC_DEVICE_FIELDS) if (d[k] !== undefined) out[k] = d[k];
  return out;
}

class BadRequest extends Error {}

/** NinjaOne's error envelope: {error, error_description, error_code}. */
function ninjaError(res: Response, status: number, error: string, description: string, code?: number): void {
  res.status(status).json({ error, error_description: description, ...(code != null ? { error_code: code } : {}) });
}

function queryString(req: Request, name: string): string | undefined {
  const v = (req.query as Record<string, unknown>)[name];
  if (Array.isArray(v)) return typeof v[0] === 'string' ? v[0] : undefined;
  return typeof v === 'string' ? v : undefined;
}

function positiveInt(req: Request, name: string): number | undefined {
  const raw = queryString(req, name);
  if (raw == null || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new BadRequest(`${name} must be a positive integer`);
  return n;
}

function nonNegativeInt(req: Request, name: string): number {
  const raw = queryString(req, name);
  if (raw == null || raw === '') return 0;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new BadRequest(`${name} must be an integer`);
  return n;
}

function basicAuthCredentials(req: Request): { id: string; secret: string } | null {
  const h = req.headers.authorization;
  if (!h?.startsWith('Basic ')) return null;
  const decoded = Buffer.from(h.slice(6), 'base64').toString('utf8');
  const at = decoded.indexOf(':');
  return at < 0 ? null : { id: decodeURIComponent(decoded.slice(0, at)), secret: decodeURIComponent(decoded.slice(at + 1)) };
}

export function createNinjaOneSimulator(opts: NinjaOneSimulatorOptions = {}): NinjaOneSimulator {
  // Injected faults in NinjaOne's error envelope, `{error, error_description}`.
  const faults = new FaultInjector((status) => ({
    error: statusName(status).toLowerCase(), error_description: `${http.STATUS_CODES[status] ?? 'Error'}: injected fault`,
  }));
  const clock = new VendorClock();
  const clients = opts.clients ?? DEFAULT_CLIENTS;
  const tokenTtl = opts.tokenTtlSeconds ?? 3600;
  const instances = new Map<string, NinjaInstance>();
  const tokens = new Map<string, { instance: string; expiresAt: number; userContext: boolean }>();

  const nowSeconds = () => clock.now().getTime() / 1000;
  const instanceOf = (name: string): NinjaInstance => {
    let inst = instances.get(name);
    if (!inst) {
      inst = new NinjaInstance();
      instances.set(name, inst);
    }
    return inst;
  };
  const existing = (name: string): NinjaInstance => {
    const inst = instances.get(name);
    if (!inst) throw new Error(`ninjaone simulator: no instance "${name}"`);
    return inst;
  };
  const mustFind = <R extends NinjaResource>(inst: NinjaInstance, resource: R, id: string | number) => {
    const rec = inst.find(resource, id);
    if (!rec) throw new Error(`ninjaone simulator: no ${resource} "${id}"`);
    return rec;
  };
  /** The agent submitted data: the device's lastUpdate moves on. */
  const touchDevice = (inst: NinjaInstance, deviceId: number | undefined) => {
    const d = deviceId != null ? inst.device(deviceId) : undefined;
    if (d) d.lastUpdate = nowSeconds();
  };

  /** OS family of a device and of a script's operatingSystems, as the scripting options filter them. */
  const deviceOsFamily = (d: NinjaDevice): string => (d.nodeClass.startsWith('WINDOWS') ? 'WINDOWS' : d.nodeClass.startsWith('LINUX') ? 'LINUX' : d.nodeClass.startsWith('MAC') ? 'MAC' : d.nodeClass);
  const activity = (i: NinjaInstance, deviceId: number, script: NinjaScript, statusCode: string, extra: Record<string, unknown> = {}) => {
    const id = (i.activities[i.activities.length - 1]?.id ?? 1000) + 1;
    i.activities.push({
      id, activityTime: nowSeconds(), deviceId, severity: 'NONE', priority: 'NONE', seriesUid: randomUUID(),
      activityType: 'ACTION', statusCode, status: statusCode === 'COMPLETED' ? 'Completed' : 'Start Requested',
      sourceName: script.name, subject: script.name, message: `${script.name}: ${statusCode.toLowerCase().replace('_', ' ')}`,
      type: 'Action', data: {}, ...extra,
    });
  };
  /** The agent runs a script: a completed activity, and an install script's software shows up. */
  const runOnAgent = (i: NinjaInstance, run: ScriptRun) => {
    const script = i.find('scripts', run.scriptId);
    if (!script) return;
    run.done = true;
    activity(i, run.deviceId, script, 'COMPLETED', { activityResult: 'SUCCESS' });
    const installs = /^Install\s+(.+)$/i.exec(script.name)?.[1];
    if (installs && !i.software.some((r) => r.deviceId === run.deviceId && r.name === installs)) {
      i.insert('software', {
        deviceId: run.deviceId, name: installs, publisher: 'Sandbox Software', version: '1.0.0',
        installDate: new Date(nowSeconds() * 1000).toISOString(), timestamp: nowSeconds(),
      });
    }
    touchDevice(i, run.deviceId);
  };

  // --- HTTP -----------------------------------------------------------------------------------

  const router = express.Router();
  const api = express.Router();

  /** Refresh tokens of authorisations by a NinjaOne user, each with its client and scopes. */
  const refreshTokens = new Map<string, { clientId: string; scopes: string[] }>();
  const seedRefreshTokens = () => {
    refreshTokens.clear();
    for (const [id, c] of Object.entries(clients)) {
      if (c.refreshToken) refreshTokens.set(c.refreshToken, { clientId: id, scopes: ['monitoring', 'management', 'control', 'offline_access'] });
    }
  };
  seedRefreshTokens();
  let rotating = false;
  /** Authorization codes: single use, ten minutes (RFC 6749 section 4.1.2 recommends at most ten). */
  const codes = new Map<string, { clientId: string; redirectUri: string; scopes: string[]; challenge: string | null; method: string; expiresAt: number }>();

  const scopeError = (scopes: string[]) => scopes.find((x) => !SCOPES.has(x));
  const pkceMatches = (verifier: string | undefined, challenge: string, method: string) => {
    if (!verifier) return false;
    return method === 'S256' ? createHash('sha256').update(verifier).digest('base64url') === challenge : verifier === challenge;
  };

  /**
   * GET /ws/oauth/authorize (NinjaOne's authorization URL, NangoHQ/nango PR 5429): response_type=code,
   * client_id, redirect_uri, scope, state, optional PKCE code_challenge (S256 or plain). A bad client or
   * redirect URI is answered here, never redirected (RFC 6749 section 4.1.2.1); other problems go back to
   * redirect_uri with `error`. Otherwise NinjaOne's consent page: the signed-in user (the sandbox has
   * one, already signed in) sees the app and its scopes and approves or denies; the form posts back here
   * and the browser is sent to redirect_uri with code and state (or error=access_denied).
   */
  const authorizeRequest = (q: (name: string) => string | undefined) => {
    const client = clients[q('client_id') ?? ''];
    const redirectUri = q('redirect_uri') ?? '';
    if (!client) return { refused: { error: 'invalid_client', error_description: 'Unknown client_id' } } as const;
    const registered = client.redirectUris ? client.redirectUris.includes(redirectUri) : URL.canParse(redirectUri) && /^https?:$/.test(new URL(redirectUri).protocol);
    if (!registered) return { refused: { error: 'invalid_request', error_description: 'Invalid redirect_uri' } } as const;
    const back = new URL(redirectUri);
    const state = q('state');
    if (state != null) back.searchParams.set('state', state);
    const scopes = (q('scope') ?? 'monitoring').split(/\s+/).filter(Boolean);
    const method = q('code_challenge_method') ?? 'plain';
    const problem = q('response_type') !== 'code' ? ['unsupported_response_type', 'Only response_type=code is supported']
      : scopeError(scopes) ? ['invalid_scope', `Invalid scope: ${scopeError(scopes)}`]
        : method !== 'S256' && method !== 'plain' ? ['invalid_request', 'code_challenge_method must be S256 or plain'] : null;
    return { back, scopes, method, redirectUri, problem } as const;
  };
  const sendBack = (res: Response, back: URL, params: Record<string, string>) => {
    for (const [k, v] of Object.entries(params)) back.searchParams.set(k, v);
    res.redirect(302, back.href);
  };
  const AUTHORIZE_PARAMS = ['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method'];
  const esc = (v: string) => v.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  const authorize = (req: Request, res: Response) => {
    const r = authorizeRequest((name) => queryString(req, name));
    if ('refused' in r) return void res.status(400).json(r.refused);
    if (r.problem) return sendBack(res, r.back, { error: r.problem[0], error_description: r.problem[1] });
    const hidden = AUTHORIZE_PARAMS.map((n) => [n, queryString(req, n)] as const).filter(([, v]) => v != null)
      .map(([n, v]) => `<input type="hidden" name="${n}" value="${esc(v!)}">`).join('');
    // A consent page must not render inside another site's frame (clickjacking the Authorize button).
    setPageHeaders(res);
    res.status(200).type('html').send(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Authorize application - NinjaOne</title></head>
<body>
<main><h1>Authorize application</h1>
<p>Signed in as <strong>sandbox.admin@ninjaone.example</strong> (sandbox).</p>
<p>The application <strong>${esc(queryString(req, 'client_id') ?? '')}</strong> asks for access to your NinjaOne account:</p>
<ul>${r.scopes.map((x) => `<li>${esc(x)}</li>`).join('')}</ul>
<form method="post" action="${esc(req.baseUrl)}/ws/oauth/authorize">${hidden}
<button type="submit" name="decision" value="approve" id="approve">Authorize</button>
<button type="submit" name="decision" value="deny" id="deny">Deny</button></form></main></body></html>`);
  };
  const decide = (req: Request, res: Response) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const r = authorizeRequest((name) => (typeof body[name] === 'string' ? body[name] as string : undefined));
    if ('refused' in r) return void res.status(400).json(r.refused);
    if (r.problem) return sendBack(res, r.back, { error: r.problem[0], error_description: r.problem[1] });
    if (body.decision !== 'approve') return sendBack(res, r.back, { error: 'access_denied', error_description: 'The user denied the request' });
    const code = randomBytes(24).toString('base64url');
    const challenge = typeof body.code_challenge === 'string' ? body.code_challenge : null;
    codes.set(code, { clientId: String(body.client_id), redirectUri: r.redirectUri, scopes: r.scopes, challenge, method: r.method, expiresAt: Date.now() + 600_000 });
    sendBack(res, r.back, { code });
  };

  const issueToken = (req: Request, res: Response) => {
    const body = (req.body ?? {}) as Record<string, string | undefined>;
    const grant = body.grant_type;
    if (grant !== 'client_credentials' && grant !== 'refresh_token' && grant !== 'authorization_code') {
      res.status(400).json({ error: 'unsupported_grant_type', error_description: 'Only client_credentials, authorization_code and refresh_token are supported' });
      return;
    }
    const basic = basicAuthCredentials(req);
    const clientId = body.client_id ?? basic?.id;
    const secret = body.client_secret ?? basic?.secret;
    const client = clientId != null ? clients[clientId] : undefined;
    if (!client || client.secret !== secret || faults.credentialsRevoked(client.instance)) {
      // RFC 6749 section 5.2 error, which NinjaOne's authorization server follows (also once the MSP revoked the app).
      res.status(401).json({ error: 'invalid_client', error_description: 'Bad client credentials' });
      return;
    }
    const invalidGrant = (description: string) => void res.status(400).json({ error: 'invalid_grant', error_description: description });
    // A token of the client-credentials grant has no user context; the other two carry the authorising user's.
    let scopes: string[];
    let refreshToken: string | null = null;
    if (grant === 'authorization_code') {
      const issued = codes.get(body.code ?? '');
      codes.delete(body.code ?? '');
      if (!issued || issued.expiresAt <= Date.now() || issued.clientId !== clientId) return invalidGrant('Invalid authorization code');
      if (body.redirect_uri !== issued.redirectUri) return invalidGrant('redirect_uri does not match the authorization request');
      if (issued.challenge != null && !pkceMatches(body.code_verifier, issued.challenge, issued.method)) return invalidGrant('Invalid code_verifier');
      scopes = issued.scopes;
      // Refresh tokens come with the offline_access scope (NangoHQ/nango PR 5429).
      if (scopes.includes('offline_access')) {
        refreshToken = randomBytes(24).toString('base64url');
        refreshTokens.set(refreshToken, { clientId: clientId!, scopes });
      }
    } else if (grant === 'refresh_token') {
      const held = refreshTokens.get(body.refresh_token ?? '');
      if (!held || held.clientId !== clientId) return invalidGrant('Invalid refresh token');
      scopes = held.scopes;
      refreshToken = body.refresh_token!;
      if (rotating) {
        refreshTokens.delete(refreshToken);
        refreshToken = randomBytes(24).toString('base64url');
        refreshTokens.set(refreshToken, held);
      }
    } else {
      scopes = (body.scope ?? 'monitoring').split(/\s+/).filter(Boolean);
      if (scopeError(scopes)) {
        res.status(400).json({ error: 'invalid_scope', error_description: `Invalid scope: ${scopeError(scopes)}` });
        return;
      }
    }
    const userContext = grant !== 'client_credentials';
    const token = randomBytes(24).toString('base64url');
    tokens.set(token, { instance: client.instance, expiresAt: Date.now() + tokenTtl * 1000, userContext });
    res.json({
      access_token: token, token_type: 'Bearer', expires_in: tokenTtl, scope: scopes.join(' '),
      ...(refreshToken ? { refresh_token: refreshToken } : {}),
    });
  };

  api.use((req, res, next) => {
    const h = req.headers.authorization;
    const issued = h?.startsWith('Bearer ') ? tokens.get(h.slice(7)) : undefined;
    if (!issued || issued.expiresAt <= Date.now() || faults.credentialsRevoked(issued.instance)) {
      // The body NinjaOne answers to a missing, expired or unknown token.
      ninjaError(res, 401, 'not_authenticated', 'Invalid credentials', 10);
      return;
    }
    res.locals.instance = instanceOf(issued.instance);
    res.locals.userContext = issued.userContext;
    next();
  });

  const inst = (res: Response) => res.locals.instance as NinjaInstance;
  const deviceFilter = (req: Request): DevicePredicate | null => parseDeviceFilter(queryString(req, 'df'));
  /** Rows of a device-scoped report pass `df` when their device does. */
  const rowFilter = (i: NinjaInstance, df: DevicePredicate | null) => (row: { deviceId?: number }) => {
    if (!df) return true;
    const d = row.deviceId != null ? i.device(row.deviceId) : undefined;
    return d != null && df(d);
  };

  api.get('/organizations', (req, res) => {
    const size = positiveInt(req, 'pageSize') ?? Number.MAX_SAFE_INTEGER;
    res.json(pageAfter(inst(res).organizations, nonNegativeInt(req, 'after'), size, null));
  });

  api.get('/organization/:id', (req, res) => {
    const org = inst(res).organization(Number(req.params.id));
    if (!org) return ninjaError(res, 404, 'invalid_id', `Organization ${req.params.id} not found`);
    res.json(org);
  });

  // Page size: NinjaOne documents no maximum for the device lists; without pageSize it returns all.
  api.get('/devices', (req, res) => {
    const size = positiveInt(req, 'pageSize') ?? Number.MAX_SAFE_INTEGER;
    res.json(pageAfter(inst(res).devices, nonNegativeInt(req, 'after'), size, deviceFilter(req)).map(basicDevice));
  });

  api.get('/devices-detailed', (req, res) => {
    const size = positiveInt(req, 'pageSize') ?? Number.MAX_SAFE_INTEGER;
    res.json(pageAfter(inst(res).devices, nonNegativeInt(req, 'after'), size, deviceFilter(req)));
  });

  api.get('/device/:id', (req, res) => {
    const d = inst(res).device(Number(req.params.id));
    if (!d) return ninjaError(res, 404, 'invalid_id', `Device ${req.params.id} not found`);
    res.json(d);
  });

  /** One page of a /v2/queries/* report, opening a cursor on the first call. */
  const reportPage = (req: Request, res: Response, query: string, matching: () => readonly unknown[]) => {
    const i = inst(res);
    const requested = positiveInt(req, 'pageSize');
    const cursorName = queryString(req, 'cursor');
    let cursor: QueryCursor | undefined;
    if (cursorName) {
      cursor = i.cursor(cursorName, query);
      if (!cursor) return ninjaError(res, 400, 'invalid_cursor', `Cursor ${cursorName} is unknown or expired`);
      if (requested) cursor.pageSize = Math.min(requested, QUERY_MAX_PAGE);
    } else {
      cursor = i.openCursor(query, matching(), Math.min(requested ?? QUERY_DEFAULT_PAGE, QUERY_MAX_PAGE), CURSOR_TTL_MS);
    }
    const offset = cursor.nextOffset;
    const results = cursor.rows.slice(offset, offset + cursor.pageSize);
    cursor.nextOffset = offset + results.length;
    res.json({
      cursor: { name: cursor.name, offset, count: results.length, expires: cursor.expiresAt / 1000 },
      results,
    });
  };

  api.get('/queries/software', (req, res) => {
    const i = inst(res);
    const keep = rowFilter(i, deviceFilter(req));
    const before = queryString(req, 'installedBefore');
    const after = queryString(req, 'installedAfter');
    const beforeMs = before ? Date.parse(before) : NaN;
    const afterMs = after ? Date.parse(after) : NaN;
    if ((before && Number.isNaN(beforeMs)) || (after && Number.isNaN(afterMs))) throw new BadRequest('invalid date');
    reportPage(req, res, 'software', () => i.software.filter((r: NinjaSoftware) => {
      if (!keep(r)) return false;
      const installed = r.installDate ? Date.parse(r.installDate) : NaN;
      if (before && !(installed < beforeMs)) return false;
      if (after && !(installed > afterMs)) return false;
      return true;
    }));
  });

  api.get('/queries/os-patches', (req, res) => {
    const i = inst(res);
    const keep = rowFilter(i, deviceFilter(req));
    const status = queryString(req, 'status');
    const type = queryString(req, 'type');
    const severity = queryString(req, 'severity');
    reportPage(req, res, 'os-patches', () => i.osPatches.filter((r: NinjaOsPatch) =>
      keep(r) && (!status || r.status === status) && (!type || r.type === type) && (!severity || r.severity === severity)));
  });

  api.get('/alerts', (req, res) => {
    const i = inst(res);
    const keep = rowFilter(i, deviceFilter(req));
    const sourceType = queryString(req, 'sourceType');
    res.json(i.alerts.filter((a) => keep(a) && (!sourceType || a.sourceType === sourceType)));
  });

  api.get('/automation/scripts', (_req, res) => {
    res.json(inst(res).scripts);
  });

  api.get('/device/:id/activities', (req, res) => {
    const i = inst(res);
    const d = i.device(Number(req.params.id));
    if (!d) return ninjaError(res, 404, 'invalid_id', `Device ${req.params.id} not found`);
    const size = positiveInt(req, 'pageSize') ?? ACTIVITY_PAGE.default;
    if (size < ACTIVITY_PAGE.min || size > ACTIVITY_PAGE.max) throw new BadRequest(`pageSize must be between ${ACTIVITY_PAGE.min} and ${ACTIVITY_PAGE.max}`);
    const olderThan = positiveInt(req, 'olderThan');
    const newerThan = positiveInt(req, 'newerThan');
    const type = queryString(req, 'activityType');
    const status = queryString(req, 'status');
    const rows = i.activities
      .filter((a) => a.deviceId === d.id && (!type || a.activityType === type) && (!status || a.statusCode === status)
        && (olderThan == null || a.id < olderThan) && (newerThan == null || a.id > newerThan))
      .reverse() // newest first
      .slice(0, size);
    const mine = i.activities.filter((a) => a.deviceId === d.id);
    res.json({
      lastActivityId: i.activities[i.activities.length - 1]?.id ?? 0,
      activities: rows,
      lastNodeActivityId: mine[mine.length - 1]?.id ?? 0,
    });
  });

  api.post('/device/:id/script/run', express.json(), (req, res) => {
    if (res.locals.userContext !== true) {
      return ninjaError(res, 403, 'user_context_required', 'Access key does not have user context which is required for this request', 5);
    }
    const i = inst(res);
    const d = i.device(Number(req.params.id));
    if (!d) return ninjaError(res, 404, 'invalid_id', `Device ${req.params.id} not found`);
    const b = (req.body ?? {}) as Record<string, unknown>;
    if (b.type !== 'SCRIPT' && b.type !== 'ACTION') return ninjaError(res, 400, 'invalid_parameter', 'type must be SCRIPT or ACTION');
    if (b.runAs != null && (typeof b.runAs !== 'string' || !RUN_AS_ROLES.has(b.runAs))) {
      return ninjaError(res, 400, 'invalid_parameter', `Unknown credential role ${String(b.runAs)}`);
    }
    if (b.parameters != null && typeof b.parameters !== 'string') return ninjaError(res, 400, 'invalid_parameter', 'parameters must be a string');
    // Built-in actions are not modelled: every action uid is unknown here.
    if (b.type === 'ACTION') return ninjaError(res, 404, 'invalid_id', `Action ${String(b.uid)} not found`);
    if (typeof b.id !== 'number' || !Number.isInteger(b.id)) return ninjaError(res, 400, 'invalid_parameter', 'id (script id) is required for type SCRIPT');
    const script = i.find('scripts', b.id);
    if (!script) return ninjaError(res, 404, 'invalid_id', `Script ${b.id} not found`);
    // The scripting options of a device list only active scripts for its OS; others cannot run there.
    if (script.active === false || !(script.operatingSystems ?? []).includes(deviceOsFamily(d))) {
      return ninjaError(res, 400, 'invalid_parameter', `Script ${b.id} is not available for device ${d.id}`);
    }
    const run: ScriptRun = {
      deviceId: d.id, scriptId: script.id, runAs: (b.runAs as string | undefined) ?? null,
      parameters: (b.parameters as string | undefined) ?? null, requestedAt: nowSeconds(), done: false,
    };
    i.runs.push(run);
    activity(i, d.id, script, 'START_REQUESTED');
    // An offline device picks the run up when it checks in again (see `update`).
    if (!d.offline) runOnAgent(i, run);
    res.status(204).end();
  });

  api.use((req, res) => ninjaError(res, 404, 'not_found', `No API resource at ${req.method} /v2${req.path}`));

  // Express 5 routes thrown errors here, also from async handlers.
  api.use((err: unknown, _req: Request, res: Response, next: (e?: unknown) => void) => {
    if (err instanceof BadRequest || err instanceof DeviceFilterError) return ninjaError(res, 400, 'invalid_parameter', err.message);
    next(err);
  });

  // Control routes first (not subject to faults), then faults, then the vendor API.
  const sim: NinjaOneSimulator = {
    vendor: 'ninjaone',
    faults,
    router,

    seed(instance, fixtures) {
      const fresh = new NinjaInstance();
      for (const [resource, rows] of Object.entries(fixtures)) {
        if (!(NINJA_RESOURCES as readonly string[]).includes(resource)) {
          throw new Error(`ninjaone simulator: unknown fixture resource "${resource}"`);
        }
        for (const row of rows) fresh.insert(resource as NinjaResource, structuredClone(row) as never);
      }
      instances.set(instance, fresh);
    },

    grow(instance, resource, count) {
      if (!(NINJA_RESOURCES as readonly string[]).includes(resource)) {
        throw new Error(`ninjaone simulator: cannot grow "${resource}"`);
      }
      growNinjaInstance(instanceOf(instance), resource as NinjaResource, count, nowSeconds());
    },

    reset() {
      instances.clear();
    },

    simulate(instance, change) {
      return simulateNinjaOne(sim, instance, change);
    },

    reserveIds(instance, resource, above) {
      const key = ({ devices: 'devices', companies: 'organizations' } as const)[resource as 'devices' | 'companies'];
      if (key) { const i = instanceOf(instance); i.idFloor[key] = Math.max(i.idFloor[key], above); }
    },

    exportState(instance) {
      const i = instances.get(instance);
      if (!i) return undefined;
      const records = Object.fromEntries(NINJA_RESOURCES.map((r) => [r, structuredClone(i.list(r))]));
      // Activities and script runs are no seed resources: the activity log's ids continue from the last one kept.
      return {
        records, issued: { ...i.idFloor }, extra: { activities: structuredClone(i.activities), runs: structuredClone(i.runs) }, clock: clock.lastStamp,
      };
    },

    importState(instance, state) {
      sim.seed(instance, state.records);
      const i = existing(instance);
      for (const key of ['devices', 'organizations'] as const) i.idFloor[key] = Math.max(i.idFloor[key], state.issued[key] ?? 0);
      const { activities, runs } = state.extra;
      if (Array.isArray(activities)) i.activities.push(...(activities as NinjaActivity[]));
      if (Array.isArray(runs)) i.runs.push(...(runs as ScriptRun[]));
      clock.continueAfter(state.clock);
    },

    get(instance, resource, id) {
      const rec = instances.get(instance)?.find(resource, id);
      return rec ? structuredClone(rec) : undefined;
    },

    list(instance, resource) {
      return structuredClone(instances.get(instance)?.list(resource) ?? []);
    },

    update(instance, resource, id, patch) {
      const i = existing(instance);
      const rec = mustFind(i, resource, id) as Record<string, unknown>;
      const now = nowSeconds();
      Object.assign(rec, structuredClone(patch));
      // Keys are identity: a patch cannot move a record to another id.
      if (resource === 'devices' || resource === 'organizations') rec.id = Number(id);
      if (resource === 'devices' && !('lastUpdate' in patch)) rec.lastUpdate = now;
      // A device back online runs what was queued for it.
      if (resource === 'devices' && rec.offline === false) {
        for (const run of i.runs) if (run.deviceId === rec.id && !run.done) runOnAgent(i, run);
      }
      if (resource === 'alerts' && !('updateTime' in patch)) rec.updateTime = now;
      if ((resource === 'software' || resource === 'os-patches') && !('timestamp' in patch)) rec.timestamp = now;
      return structuredClone(rec) as NinjaRecordByResource[typeof resource];
    },

    create(instance, resource, record) {
      const i = instanceOf(instance);
      const now = nowSeconds();
      const rec = structuredClone(record) as Record<string, unknown>;
      switch (resource) {
        case 'organizations':
          rec.id ??= i.nextOrganizationId();
          rec.nodeApprovalMode ??= 'AUTOMATIC';
          break;
        case 'devices':
          rec.id ??= i.nextDeviceId();
          rec.uid ??= randomUUID();
          rec.organizationId ??= i.organizations[0]?.id;
          rec.nodeClass ??= 'WINDOWS_WORKSTATION';
          rec.approvalStatus ??= 'APPROVED';
          rec.offline ??= false;
          rec.created ??= now;
          rec.lastContact ??= now;
          rec.lastUpdate ??= now;
          break;
        case 'software':
          rec.timestamp ??= now;
          break;
        case 'os-patches':
          rec.id ??= randomUUID();
          rec.status ??= 'MANUAL';
          rec.timestamp ??= now;
          break;
        case 'alerts':
          rec.uid ??= randomUUID();
          rec.createTime ??= now;
          rec.updateTime ??= rec.createTime;
          break;
      }
      i.insert(resource, rec as NinjaRecordByResource[typeof resource]);
      return structuredClone(rec) as NinjaRecordByResource[typeof resource];
    },

    remove(instance, resource, id) {
      return instances.get(instance)?.remove(resource, id) ?? false;
    },

    raiseAlert(instance, deviceId, message, extra = {}) {
      const i = existing(instance);
      if (!i.device(deviceId)) throw new Error(`ninjaone simulator: no device ${deviceId}`);
      const now = nowSeconds();
      const alert: NinjaAlert = {
        uid: randomUUID(),
        deviceId,
        message,
        createTime: now,
        updateTime: now,
        sourceType: 'CONDITION_SCRIPT_RESULT',
        sourceConfigUid: randomUUID(),
        sourceName: 'Sandbox condition',
        subject: message.slice(0, 60),
        data: {},
        ...structuredClone(extra),
      };
      i.insert('alerts', alert);
      touchDevice(i, deviceId);
      return structuredClone(alert);
    },

    clearAlert(instance, uid) {
      const i = instances.get(instance);
      const alert = i?.find('alerts', uid);
      if (!i || !alert) return false;
      i.remove('alerts', uid);
      touchDevice(i, alert.deviceId);
      return true;
    },

    expireTokens() {
      tokens.clear();
    },

    rotateRefreshTokens(on) {
      rotating = on;
    },

    revokeAuthorisation(refreshToken) {
      refreshTokens.delete(refreshToken);
    },

    runs(instance) {
      return structuredClone(instances.get(instance)?.runs ?? []);
    },
  };

  router.use('/_control', controlRouter(sim, opts.controlToken));
  router.use(faults.middleware());
  router.get('/ws/oauth/authorize', authorize);
  router.post('/ws/oauth/authorize', express.urlencoded({ extended: false }), decide);
  router.post('/ws/oauth/token', express.urlencoded({ extended: false }), issueToken);
  router.use('/v2', api);
  return sim;
}
