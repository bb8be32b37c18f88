/**
 * Shared parts of the vendor simulators: fault injection, the control routes, and a standalone
 * server for tests. Each vendor's simulator lives in its own folder and uses these.
 */
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ConnectorName } from '../../entities/tenancy';

export interface FaultSpec {
  /** HTTP status to answer with (429 or 503 usually). */
  status: number;
  /** How many matching requests get the fault; Infinity for "until cleared". */
  times: number;
  /** Retry-After header value in seconds (429/503). */
  retryAfterSeconds?: number;
  /** Only requests whose path (after the vendor mount) contains this string. */
  pathIncludes?: string;
  /** Only requests with this method. */
  method?: string;
  /** Let the request reach the handler (the vendor does the work) and only then fail the answer:
   *  "the vendor accepted the write but the connection dropped before the answer". */
  afterHandler?: 'drop';
  /** Let the request reach the handler (the vendor does the work) and hold the answer this long:
   *  "the vendor has accepted the write; our side dies before the answer arrives". */
  holdResponseMs?: number;
  /** Hold the request this long before the vendor does the work: "the vendor is slow to accept the
   *  write", so a lookup made meanwhile does not find it yet. */
  holdRequestMs?: number;
}

/**
 * The body an injected fault answers with, in the simulated vendor's own error shape (a connector must
 * see the same bytes an outage or throttle of that vendor would send). `req.path` is relative to the
 * simulator's mount.
 */
export type FaultBody = (status: number, req: Request) => unknown;

/** ConnectWise's `{code, message}`: the default, kept for simulators that pass nothing. */
export const connectWiseFaultBody: FaultBody = (status) => ({
  code: status === 429 ? 'TooManyRequests' : status === 503 ? 'ServiceUnavailable' : 'UnexpectedError',
  message: 'Injected fault',
});

/** The HTTP reason phrase as an upper-case identifier: 429 -> TOO_MANY_REQUESTS. */
export function statusName(status: number): string {
  return (http.STATUS_CODES[status] ?? 'Error').toUpperCase().replace(/[^A-Z0-9]+/g, '_').replace(/^_|_$/g, '');
}

/** What one credential asked of the simulated vendor: the figures a budget test asserts. */
export interface CredentialUsage {
  requests: number;
  inFlight: number;
  /** The most requests of this credential the vendor held at once. */
  maxInFlight: number;
}

export class FaultInjector {
  constructor(private readonly errorBody: FaultBody = connectWiseFaultBody) {}
  /** Names the credential of a request (each simulator knows its own auth); one bucket by default. */
  credentialOf: (req: Request) => string = () => 'default';
  private readonly usage = new Map<string, CredentialUsage>();

  /** Requests and peak concurrency of one credential (or of the only one) since the last resetLog. */
  usageOf(credential = 'default'): CredentialUsage {
    return { ...(this.usage.get(credential) ?? { requests: 0, inFlight: 0, maxInFlight: 0 }) };
  }
  private faults: (FaultSpec & { remaining: number })[] = [];
  latencyMs = 0;
  /** Requests seen, for tests that count calls. */
  requests: { method: string; path: string; at: number }[] = [];

  /**
   * Instances (datasets) whose credentials the vendor refuses, as after the MSP revoked its API member or
   * application: each simulator answers 401 in its own shape, at its token endpoint and to tokens issued
   * before (POST /sandbox/simulate credentials_revoked). Not undone by `clear`: `restoreCredentials` does.
   */
  private readonly revoked = new Set<string>();
  revokeCredentials(instance: string): void {
    this.revoked.add(instance);
  }
  restoreCredentials(instance: string): void {
    this.revoked.delete(instance);
  }
  credentialsRevoked(instance: string | undefined): boolean {
    return instance !== undefined && this.revoked.has(instance);
  }

  inject(spec: FaultSpec): void {
    this.faults.push({ ...spec, remaining: spec.times });
  }
  setLatency(ms: number): void {
    this.latencyMs = ms;
  }
  clear(): void {
    this.faults = [];
    this.latencyMs = 0;
  }
  resetLog(): void {
    this.requests = [];
    for (const u of this.usage.values()) { u.requests = 0; u.maxInFlight = u.inFlight; }
  }

  /** Counts the request against its credential until its answer is sent or the connection closes. */
  private meter(req: Request, res: Response): void {
    const key = this.credentialOf(req);
    let u = this.usage.get(key);
    if (!u) this.usage.set(key, (u = { requests: 0, inFlight: 0, maxInFlight: 0 }));
    u.requests++;
    u.inFlight++;
    u.maxInFlight = Math.max(u.maxInFlight, u.inFlight);
    let done = false;
    const end = () => { if (!done) { done = true; u!.inFlight--; } };
    res.once('finish', end);
    res.once('close', end);
  }
  countRequests(pathIncludes?: string, method?: string): number {
    return this.requests.filter((r) => (!pathIncludes || r.path.includes(pathIncludes)) && (!method || r.method === method)).length;
  }

  private take(req: Request): (FaultSpec & { remaining: number }) | undefined {
    const f = this.faults.find(
      (x) => x.remaining > 0 && (!x.pathIncludes || req.path.includes(x.pathIncludes)) && (!x.method || x.method === req.method),
    );
    if (f) f.remaining -= 1;
    return f;
  }

  /** Express middleware; mount first in a simulator's router (after control routes). */
  middleware() {
    return async (req: Request, res: Response, next: NextFunction) => {
      this.requests.push({ method: req.method, path: req.path, at: Date.now() });
      this.meter(req, res);
      if (this.requests.length > 100_000) this.requests.splice(0, 50_000);
      if (this.latencyMs > 0) await new Promise((r) => setTimeout(r, this.latencyMs));
      const fault = this.take(req);
      if (!fault) return next();
      if (fault.afterHandler === 'drop') {
        // Let the vendor do the work, then cut the connection before any answer leaves.
        const socket = req.socket;
        res.write = (() => true) as typeof res.write;
        res.end = (() => { socket.destroy(); return res; }) as typeof res.end;
        return next();
      }
      if (fault.holdRequestMs != null) {
        await new Promise((r) => setTimeout(r, fault.holdRequestMs));
        return next();
      }
      if (fault.holdResponseMs != null) {
        const end = res.end.bind(res) as (...a: unknown[]) => typeof res;
        res.end = ((...args: unknown[]) => { setTimeout(() => end(...args), fault.holdResponseMs); return res; }) as typeof res.end;
        return next();
      }
      if (fault.retryAfterSeconds != null) res.setHeader('Retry-After', String(fault.retryAfterSeconds));
      res.status(fault.status).json(this.errorBody(fault.status, req));
    };
  }
}

/**
 * A change the MSP makes in its own PSA or RMM, as the sandbox trigger (POST /sandbox/simulate) asks for it.
 * `target_id` is the vendor's id of the record (`source_id` in our lists); absent, a fixture record that fits.
 */
export type SimulatedChange =
  | { kind: 'ticket_status'; target_id?: string; status?: string }
  | { kind: 'ticket_note'; target_id?: string; text?: string }
  | { kind: 'ticket_close'; target_id?: string }
  | { kind: 'ticket_reopen'; target_id?: string }
  | { kind: 'device_offline'; target_id?: string }
  | { kind: 'company_renamed'; target_id?: string; name?: string };

/** The change cannot be made (no such record, or it is already in that state): the caller's mistake. */
export class SimulationRefused extends Error {}

export interface VendorSimulator {
  readonly vendor: ConnectorName;
  readonly faults: FaultInjector;
  /** Router to mount at /sandbox-vendors/<vendor>. */
  readonly router: Router;
  /** Replace an instance's data with native fixtures (instance = the dataset the credentials select). */
  seed(instance: string, fixtures: Record<string, unknown[]>): void;
  /** Add `count` synthetic records of a resource to an instance (benchmarks). */
  grow(instance: string, resource: string, count: number): void;
  /** Drop every instance. */
  reset(): void;
  /**
   * Keeps an instance's ids of a canonical resource (tickets, devices, companies...) above `above`: ids it
   * issued before a restart lost its state are never issued again. Resources the vendor keys otherwise are ignored.
   */
  reserveIds?(instance: string, resource: string, above: number): void;
  /** Makes an MSP-side change as the vendor's UI would; answers the vendor id of the changed record. */
  simulate?(instance: string, change: SimulatedChange): { target_id: string };
  /** What the instance holds now (JSON-safe, detached from the live records); undefined when it has none. */
  exportState(instance: string): InstanceState | undefined;
  /** Replaces the instance's data with what `exportState` gave (as `seed` replaces it with fixtures). */
  importState(instance: string, state: InstanceState): void;
}

/**
 * One simulator instance's state as a graceful close keeps it for the next start (docs/architecture.md,
 * Sandbox): what a sandbox user would notice lost. Deliberately not kept, because each belongs to the
 * process and a restart should clear it as a reset does: injected faults and latency, revoked credentials,
 * issued access and refresh tokens (the connectors ask for new ones), rate-limit windows and usage counts,
 * the request log, and open report cursors.
 */
export interface InstanceState {
  /** Records per resource in the vendor's native shape: the form `seed` takes, so import reuses it. */
  records: Record<string, unknown[]>;
  /** Per id space, the highest id issued so far: a removed or reserved id is never issued again. */
  issued: Record<string, number>;
  /** What else the vendor's behaviour continues from (Autotask's ticket numbers per day, Datto's job runs...). */
  extra: Record<string, unknown>;
  /**
   * The vendor clock's last stamp (ms): a change after the restart is stamped later than every change
   * before it, so an incremental sync's watermark does not hide it.
   */
  clock: number;
}

/** The simulator instances of one sandbox tenant as stored between a graceful close and the next start. */
export interface SimulatorsSnapshot {
  version: 1;
  /** connector -> its instance's state */
  connectors: Record<string, InstanceState>;
}

/** A snapshot that cannot be restored; its message names what is wrong, never a value it holds. */
export class SnapshotInvalid extends Error {}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Checks a stored snapshot's shape before anything is imported from it (a half-imported tenant is worse than a reset). */
export function parseSnapshot(value: unknown): SimulatorsSnapshot {
  let v = value;
  if (typeof value === 'string') {
    // JSON.parse's own message quotes the text: not logged.
    try { v = JSON.parse(value); } catch { throw new SnapshotInvalid('not JSON'); }
  }
  if (!isObject(v) || v.version !== 1 || !isObject(v.connectors)) throw new SnapshotInvalid('not a version 1 simulators snapshot');
  for (const [connector, s] of Object.entries(v.connectors)) {
    const ok = isObject(s) && isObject(s.records) && Object.values(s.records).every(Array.isArray)
      && isObject(s.issued) && Object.values(s.issued).every((n) => Number.isSafeInteger(n))
      && isObject(s.extra) && typeof s.clock === 'number' && Number.isFinite(s.clock);
    if (!ok) throw new SnapshotInvalid(`the ${connector} state is malformed`);
  }
  return v as unknown as SimulatorsSnapshot;
}

/** An instance kept as tables of records with an id counter per table (ConnectWise's, HaloPSA's stores). */
interface TableInstance {
  tableRows(): Record<string, readonly unknown[]>;
  issued(): Record<string, number>;
}

/** A table-kept instance's state: its rows (detached), its id counters and the vendor clock; undefined without one. */
export function tableState(inst: TableInstance | undefined, clock: VendorClock): InstanceState | undefined {
  if (!inst) return undefined;
  return { records: structuredClone(inst.tableRows()) as Record<string, unknown[]>, issued: inst.issued(), extra: {}, clock: clock.lastStamp };
}

/** Restores a table-kept instance: its rows by `seed`, each id space reserved above what was issued, the clock after its last stamp. */
export function restoreTableState(state: InstanceState, seed: () => void, reserveAbove: (space: string, above: number) => void, clock: VendorClock): void {
  seed();
  for (const [space, above] of Object.entries(state.issued)) reserveAbove(space, above);
  clock.continueAfter(state.clock);
}

/** Each named simulator's state of `instance` (a simulator that holds none of it is left out). */
export function exportSnapshot(sims: Record<string, VendorSimulator>, instance: string, connectors: readonly string[]): SimulatorsSnapshot {
  const out: SimulatorsSnapshot = { version: 1, connectors: {} };
  for (const c of connectors) {
    const state = sims[c]?.exportState(instance);
    if (state) out.connectors[c] = state;
  }
  return out;
}

/** Imports every part of a snapshot into `instance`; throws (before importing anything) on a connector this process has no simulator for. */
export function importSnapshot(sims: Record<string, VendorSimulator>, instance: string, snapshot: SimulatorsSnapshot): void {
  const unknown = Object.keys(snapshot.connectors).filter((c) => !sims[c]);
  if (unknown.length) throw new SnapshotInvalid(`no simulator for ${unknown.join(', ')}`);
  for (const [c, state] of Object.entries(snapshot.connectors)) sims[c].importState(instance, structuredClone(state));
}

/**
 * Control routes under /_control on a simulator (fault injection from another process), guarded by
 * a bearer token: they are test tooling, not a vendor API.
 */
export function controlRouter(sim: Pick<VendorSimulator, 'faults'>, controlToken: string | undefined): Router {
  const r = express.Router();
  r.use(express.json());
  r.use((req, res, next) => {
    if (!controlToken || req.headers.authorization !== `Bearer ${controlToken}`) {
      res.status(401).json({ message: 'control routes need the admin token' });
      return;
    }
    next();
  });
  r.post('/faults', (req, res) => {
    const b = req.body as Partial<FaultSpec> & { latencyMs?: number };
    if (typeof b.latencyMs === 'number') sim.faults.setLatency(b.latencyMs);
    if (typeof b.status === 'number') {
      sim.faults.inject({
        status: b.status,
        times: typeof b.times === 'number' ? b.times : 1,
        retryAfterSeconds: b.retryAfterSeconds,
        pathIncludes: b.pathIncludes,
        method: b.method,
        afterHandler: b.afterHandler,
      });
    }
    res.status(204).end();
  });
  r.delete('/faults', (_req, res) => {
    sim.faults.clear();
    res.status(204).end();
  });
  return r;
}

/**
 * One request a simulator answered, as a contract check reads it: the connector's call as the vendor would
 * receive it. `path` is relative to the simulator's mount (`/atservicesrest/v1.0/Tickets/12/Notes`); `body` is
 * what the simulator's own parser made of it (JSON or form), or undefined when it read none.
 */
export interface SimulatorRequest {
  vendor: string;
  method: string;
  path: string;
  queryKeys: string[];
  /** Each query parameter's values as sent, in order (a repeated key has several). */
  query?: Record<string, string[]>;
  /** The names of the request's headers, in lower case (never their values: credentials travel there). */
  headerNames?: string[];
  contentType: string | null;
  body: unknown;
  status: number;
}
export type SimulatorRequestObserver = (r: SimulatorRequest) => void;
const requestObservers = new Set<SimulatorRequestObserver>();

/**
 * Calls `observer` with every request a simulator of this process answers from now on (the vendor contract
 * check, test/support/vendor-contract.ts); returns the function that stops it. The observer must not keep `body`.
 */
export function observeSimulatorRequests(observer: SimulatorRequestObserver): () => void {
  requestObservers.add(observer);
  return () => { requestObservers.delete(observer); };
}

/** Middleware in front of a simulator's router: reports each answered vendor call to the observers. */
export function reportSimulatorRequests(vendor: string) {
  return (req: Request, res: Response, next: NextFunction) => {
    // Control routes are test tooling, not vendor calls.
    if (requestObservers.size === 0 || req.path.startsWith('/_control')) return next();
    const method = req.method;
    const path = req.path;
    const searchParams = new URL(req.originalUrl, 'http://simulator.invalid').searchParams;
    const queryKeys = [...searchParams.keys()];
    const query: Record<string, string[]> = {};
    for (const [k, v] of searchParams) (query[k] ??= []).push(v);
    const contentType = req.headers['content-type'] ?? null;
    // The simulator's body parser runs inside its router on this same request object: read it once answered
    // (or once the connection closed without an answer: an injected drop still reached the vendor).
    let reported = false;
    const report = () => {
      if (reported) return;
      reported = true;
      const headerNames = Object.keys(req.headers);
      const seen: SimulatorRequest = { vendor, method, path, queryKeys, query, headerNames, contentType, body: req.body, status: res.statusCode };
      for (const observe of requestObservers) observe(seen);
    };
    res.once('finish', report);
    res.once('close', report);
    next();
  };
}

/** Runs one simulator on its own HTTP server on 127.0.0.1 (tests). Returns the mount URL. */
export async function startStandalone(sim: VendorSimulator): Promise<{ url: string; close: () => Promise<void> }> {
  const app = express();
  app.use(`/sandbox-vendors/${sim.vendor}`, reportSimulatorRequests(sim.vendor), sim.router);
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/sandbox-vendors/${sim.vendor}`,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/** Monotonic vendor clock: every change gets a later timestamp than the previous one. */
export class VendorClock {
  private last = 0;
  /** `wallClock` is the vendor's idea of now (tests fix it so that no answer depends on the day they run). */
  constructor(private readonly wallClock: () => number = Date.now) {}
  now(): Date {
    const t = Math.max(this.wallClock(), this.last + 1);
    this.last = t;
    return new Date(t);
  }
  /** The last stamp given (ms; 0 before the first). */
  get lastStamp(): number {
    return this.last;
  }
  /** Every stamp from now on is later than `t` (a restored instance's changes stay in order). */
  continueAfter(t: number): void {
    this.last = Math.max(this.last, t);
  }
}
