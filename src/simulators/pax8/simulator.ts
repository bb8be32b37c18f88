/**
 * Pax8 Partner API simulator, mounted at /sandbox-vendors/pax8 with the API under /v1:
 *   POST /v1/token                              client credentials -> bearer token (24 h)
 *   GET  /v1/companies[?page,size,sort,filters]  GET /v1/companies/{id}   POST /v1/companies
 *   GET  /v1/companies/{id}/contacts             GET .../contacts/{contactId}   POST .../contacts
 *   GET  /v1/products[/{id}]                     GET  /v1/subscriptions[/{id}]
 * Shapes, paging and error bodies follow devx.pax8.com (Partner Endpoints OpenAPI). Pax8 list
 * endpoints have no last-updated filter (companies carry `updatedDate`, but nothing filters on it).
 */
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { randomBytes, randomUUID } from 'node:crypto';
import { controlRouter, FaultInjector, statusName, VendorClock, type VendorSimulator } from '../kit';
import http from 'node:http';
import { isPax8Resource, Pax8Dataset, PAX8_RESOURCES, type Pax8Resource } from './dataset';
import { applyFilters, applySort, pageOf, param, readPageRequest, SortError, type Query } from './listing';
import type {
  Pax8Company, Pax8Contact, Pax8ErrorBody, Pax8ErrorDetail, Pax8Product, Pax8Subscription,
} from './native';
import { growDataset } from './synthetic';
import { checkCompany, checkContact } from './validation';

/** Sandbox API clients (public development values): client id -> secret and the dataset it selects. */
export const PAX8_SANDBOX_CLIENTS: Readonly<Record<string, { secret: string; instance: string }>> = {
  sandbox: { secret: 'sandbox-secret', instance: 'sandbox-alpha' },
};
export const PAX8_AUDIENCE = 'https://api.pax8.com';
/**
 * Audiences whose tokens reach the partner endpoints: `https://api.pax8.com` and the legacy
 * `api://p8p.client`, still in the TokenRequest `audience` enum of Pax8's Authentication OpenAPI
 * (devx.pax8.com; api-evangelist/pax8 `openapi/_original/pax8-authentication-openapi.json`) and used
 * by many scripts. The enum's other values (`api://provisioning`, `api://usage`) are for the vendor
 * APIs, which this simulator does not serve: refused here like any unknown audience.
 */
/** The legacy audience of that enum. */
export const PAX8_LEGACY_AUDIENCE = 'api://p8p.client';
export const PAX8_PARTNER_AUDIENCES: readonly string[] = [PAX8_AUDIENCE, PAX8_LEGACY_AUDIENCE];
const TOKEN_TTL_SECONDS = 86_400;

export interface Pax8Records {
  companies: Pax8Company;
  contacts: Pax8Contact;
  products: Pax8Product;
  subscriptions: Pax8Subscription;
}

/** A change to a record: any top-level fields; nested objects (a company's address) merge. */
export type Pax8Patch<T> = {
  [K in keyof T]?: T[K] extends readonly unknown[] ? T[K] : T[K] extends object ? Partial<T[K]> : T[K];
};

/** Thrown by the programmatic `create` when the record is not one Pax8 would accept. */
export class Pax8InvalidRecordError extends Error {
  constructor(readonly details: Pax8ErrorDetail[]) {
    super(`pax8: invalid record: ${details.map((d) => d.message).join('; ')}`);
    this.name = 'Pax8InvalidRecordError';
  }
}

export interface Pax8Simulator extends VendorSimulator {
  /** A copy of one record, or undefined. */
  get<R extends Pax8Resource>(instance: string, resource: R, id: string): Pax8Records[R] | undefined;
  /** Copies of all records of a resource (contacts: optionally one company's). */
  list<R extends Pax8Resource>(instance: string, resource: R, filter?: { companyId?: string }): Pax8Records[R][];
  /** The company a contact belongs to (Pax8 contacts do not say it themselves). */
  companyOfContact(instance: string, contactId: string): string | undefined;
  /** Changes a record as the MSP would in the Pax8 portal; companies and subscriptions get a new updatedDate. */
  update<R extends Pax8Resource>(instance: string, resource: R, id: string, patch: Pax8Patch<Pax8Records[R]>): Pax8Records[R];
  /**
   * Adds a record as the portal would. companies: a POST /companies body; contacts: a contact body
   * plus `companyId`; products and subscriptions: native fields (id and dates filled in if absent).
   */
  create<R extends Pax8Resource>(instance: string, resource: R, input: Record<string, unknown>): Pax8Records[R];
}

const clone = <T>(v: T): T => structuredClone(v);

/**
 * Pax8's error envelope. A detail goes out as documented (ErrorDetail: type, message, instance,
 * status): our internal `field` stays out of the answer, so no client can lean on a property Pax8
 * does not send; the field is named in the message, as the only place Pax8 has for it.
 */
function pax8Error(res: Response, status: number, type: string, message: string, instance: string, details: Pax8ErrorDetail[] = []): void {
  const body: Pax8ErrorBody = { type, message, instance, status, details: details.map(({ field: _field, ...d }) => d) };
  res.status(status).json(body);
}

/** The path called, as Pax8 reports it in `instance` (from /v1 on). */
const calledPath = (req: Request) => `/v1${req.path}`;

/**
 * Pax8's published limit: "The current rate limit is 1000" calls a minute (devx.pax8.com, Pax8 Public APIs,
 * "API Rate Limits"; "1000 requests per minute per application" in the imperian-systems/pax8-api client's
 * README), refused with 429. Pax8 documents no Retry-After or rate-limit headers, so none is sent. Counted
 * here per partner dataset over a rolling minute, refused requests included; the token endpoint is not counted.
 */
export const PAX8_RATE_LIMIT = { requests: 1000, windowSeconds: 60 } as const;

export interface Pax8SimulatorOptions {
  controlToken?: string;
  /** client id -> secret and the dataset it selects; defaults to the public sandbox client. */
  clients?: Readonly<Record<string, { secret: string; instance: string }>>;
  rateLimit?: { requests: number; windowSeconds: number };
}

export function createPax8Simulator(opts: Pax8SimulatorOptions = {}): Pax8Simulator {
  const clients = opts.clients ?? PAX8_SANDBOX_CLIENTS;
  const rateLimit = opts.rateLimit ?? PAX8_RATE_LIMIT;
  /** Request times of each dataset within the last window, oldest first. */
  const windows = new Map<string, number[]>();
  // Injected faults in the Partner API's error body; `instance` is the path called (from /v1 on).
  const faults = new FaultInjector((status, req): Pax8ErrorBody => ({
    type: statusName(status), message: `${http.STATUS_CODES[status] ?? 'Error'}: injected fault`, instance: req.path, status, details: [],
  }));
  const clock = new VendorClock();
  const instances = new Map<string, Pax8Dataset>();
  const tokens = new Map<string, { instance: string; expiresAt: number }>();

  const dataset = (instance: string): Pax8Dataset => {
    let ds = instances.get(instance);
    if (!ds) {
      ds = new Pax8Dataset(clock);
      instances.set(instance, ds);
    }
    return ds;
  };

  // --- HTTP ------------------------------------------------------------------------------------

  const v1 = express.Router();

  // Pax8's token service is Auth0: its errors are OAuth-style `{error, error_description}`,
  // not the Partner API's error body (devx.pax8.com Authentication OpenAPI, 401 example).
  v1.post('/token', express.json(), express.urlencoded({ extended: false }), (req, res) => {
    const b = (req.body ?? {}) as Record<string, unknown>;
    const str = (k: string) => (typeof b[k] === 'string' ? (b[k] as string) : undefined);
    const grantType = str('grant_type');
    if (!grantType) {
      res.status(400).json({ error: 'invalid_request', error_description: 'Missing required parameter: grant_type' });
      return;
    }
    if (grantType !== 'client_credentials') {
      res.status(403).json({ error: 'unsupported_grant_type', error_description: `Grant type '${grantType}' not allowed for the client.` });
      return;
    }
    const client = clients[str('client_id') ?? ''];
    if (!client || client.secret !== str('client_secret') || faults.credentialsRevoked(client.instance)) {
      res.status(401).json({ error: 'access_denied', error_description: 'Unauthorized' });
      return;
    }
    const audience = str('audience');
    if (audience === undefined || !PAX8_PARTNER_AUDIENCES.includes(audience)) {
      res.status(403).json({ error: 'access_denied', error_description: `Service not found: ${audience ?? ''}` });
      return;
    }
    const token = randomBytes(32).toString('base64url');
    tokens.set(token, { instance: client.instance, expiresAt: Date.now() + TOKEN_TTL_SECONDS * 1000 });
    res.json({ access_token: token, token_type: 'Bearer', expires_in: TOKEN_TTL_SECONDS });
  });

  // Every other route needs a live bearer token; the token selects the instance.
  v1.use((req, res, next) => {
    const m = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    const grant = m ? tokens.get(m[1]) : undefined;
    if (!grant || grant.expiresAt <= Date.now() || faults.credentialsRevoked(grant.instance)) {
      if (grant) tokens.delete(m![1]);
      res.setHeader('WWW-Authenticate', 'Bearer');
      pax8Error(res, 401, 'UNAUTHORIZED', 'Full authentication is required to access this resource', calledPath(req));
      return;
    }
    res.locals.ds = dataset(grant.instance);
    // The partner's rate limit (PAX8_RATE_LIMIT).
    const now = Date.now();
    let times = windows.get(grant.instance);
    if (!times) windows.set(grant.instance, (times = []));
    while (times.length > 0 && times[0] <= now - rateLimit.windowSeconds * 1000) times.shift();
    times.push(now);
    if (times.length > rateLimit.requests) {
      pax8Error(res, 429, 'TOO_MANY_REQUESTS', `Rate limit exceeded: ${rateLimit.requests} requests per ${rateLimit.windowSeconds} seconds`, calledPath(req));
      return;
    }
    next();
  });
  v1.use(express.json());

  const ds = (res: Response) => res.locals.ds as Pax8Dataset;
  const q = (req: Request) => req.query as Query;
  const companyNotFound = (req: Request, res: Response, id: string) =>
    pax8Error(res, 404, 'NOT_FOUND', `Company Not Found: ${id}`, calledPath(req));

  v1.get('/companies', (req, res) => {
    let items = applyFilters(ds(res).companies, q(req), {
      city: (c) => c.address.city,
      country: (c) => c.address.country,
      stateOrProvince: (c) => c.address.stateOrProvince,
      postalCode: (c) => c.address.postalCode,
      selfServiceAllowed: (c) => c.selfServiceAllowed,
      billOnBehalfOfEnabled: (c) => c.billOnBehalfOfEnabled,
      orderApprovalRequired: (c) => c.orderApprovalRequired,
      status: (c) => c.status,
    });
    items = applySort(items, q(req), {
      name: (c) => c.name.toLowerCase(),
      city: (c) => c.address.city,
      country: (c) => c.address.country,
      stateOrProvince: (c) => c.address.stateOrProvince,
      postalCode: (c) => c.address.postalCode,
    });
    res.json(pageOf(items, readPageRequest(q(req))));
  });

  v1.get('/companies/:companyId', (req, res) => {
    const company = ds(res).company(req.params.companyId);
    if (!company) return companyNotFound(req, res, req.params.companyId);
    res.json(company);
  });

  v1.post('/companies', (req, res) => {
    const checked = checkCompany(req.body);
    if (!checked.ok) {
      const [type, message] = checked.status === 400 ? ['BAD_REQUEST', 'Malformed Company'] : ['UNPROCESSABLE_ENTITY', 'Invalid Company'];
      return pax8Error(res, checked.status, type, message, calledPath(req), checked.details);
    }
    res.json(ds(res).createCompany(checked.value));
  });

  v1.get('/companies/:companyId/contacts', (req, res) => {
    const id = req.params.companyId;
    if (!ds(res).company(id)) return companyNotFound(req, res, id);
    res.json(pageOf(ds(res).contactsOf(id), readPageRequest(q(req))));
  });

  v1.get('/companies/:companyId/contacts/:contactId', (req, res) => {
    const { companyId, contactId } = req.params;
    if (!ds(res).company(companyId)) return companyNotFound(req, res, companyId);
    const found = ds(res).contact(contactId);
    if (!found || found.companyId !== companyId) {
      return pax8Error(res, 404, 'NOT_FOUND', `Contact Not Found: ${contactId}`, calledPath(req));
    }
    res.json(found.contact);
  });

  v1.post('/companies/:companyId/contacts', (req, res) => {
    const id = req.params.companyId;
    if (!ds(res).company(id)) return companyNotFound(req, res, id);
    const checked = checkContact(req.body);
    if (!checked.ok) {
      const [type, message] = checked.status === 400 ? ['BAD_REQUEST', 'Malformed Contact'] : ['UNPROCESSABLE_ENTITY', 'Invalid Contact'];
      return pax8Error(res, checked.status, type, message, calledPath(req), checked.details);
    }
    res.json(ds(res).createContact(id, checked.value));
  });

  v1.get('/products', (req, res) => {
    const search = param(q(req), 'search')?.toLowerCase();
    let items: readonly Pax8Product[] = ds(res).products;
    if (search) {
      items = items.filter((p) =>
        [p.name, p.vendorName, p.sku, p.id].some((v) => v.toLowerCase().includes(search)));
    }
    items = applyFilters(items, q(req), { vendorName: (p) => p.vendorName });
    items = applySort(items, q(req), { name: (p) => p.name.toLowerCase(), vendor: (p) => p.vendorName.toLowerCase() });
    res.json(pageOf(items, readPageRequest(q(req))));
  });

  v1.get('/products/:productId', (req, res) => {
    const product = ds(res).product(req.params.productId);
    if (!product) return pax8Error(res, 404, 'NOT_FOUND', `Product Not Found: ${req.params.productId}`, calledPath(req));
    res.json(product);
  });

  v1.get('/subscriptions', (req, res) => {
    let items = applyFilters(ds(res).subscriptions, q(req), {
      status: (s) => s.status,
      billingTerm: (s) => s.billingTerm,
      companyId: (s) => s.companyId,
      productId: (s) => s.productId,
    });
    items = applySort(items, q(req), {
      quantity: (s) => s.quantity,
      startDate: (s) => s.startDate && Date.parse(s.startDate),
      endDate: (s) => s.endDate && Date.parse(s.endDate),
      createdDate: (s) => Date.parse(s.createdDate),
      billingStart: (s) => s.billingStart,
      price: (s) => s.price,
    });
    res.json(pageOf(items, readPageRequest(q(req))));
  });

  v1.get('/subscriptions/:subscriptionId', (req, res) => {
    const sub = ds(res).subscription(req.params.subscriptionId);
    if (!sub) return pax8Error(res, 404, 'NOT_FOUND', `Subscription Not Found: ${req.params.subscriptionId}`, calledPath(req));
    res.json(sub);
  });

  v1.use((req, res) => pax8Error(res, 404, 'NOT_FOUND', `No endpoint ${req.method} ${calledPath(req)}`, calledPath(req)));

  v1.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (err instanceof SortError) return pax8Error(res, 400, 'BAD_REQUEST', err.message, calledPath(req));
    const e = err as { type?: string; status?: number; message?: string };
    if (e.type === 'entity.parse.failed' || e.status === 400) {
      return pax8Error(res, 400, 'BAD_REQUEST', 'Malformed JSON request body', calledPath(req));
    }
    pax8Error(res, 500, 'INTERNAL_SERVER_ERROR', 'Something went wrong', calledPath(req));
  });

  const router: Router = express.Router();
  router.use('/_control', controlRouter({ faults }, opts.controlToken));
  router.use(faults.middleware());
  router.use('/v1', v1);

  // --- programmatic API ------------------------------------------------------------------------

  const need = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`pax8: no ${what}`);
    return value;
  };

  const sim: Pax8Simulator = {
    vendor: 'pax8',
    faults,
    router,

    seed(instance, fixtures) {
      const ds = new Pax8Dataset(clock);
      for (const key of Object.keys(fixtures)) {
        if (!isPax8Resource(key)) throw new Error(`pax8: unknown fixture resource ${key} (have ${PAX8_RESOURCES.join(', ')})`);
      }
      // Companies first: contacts and subscriptions refer to them.
      for (const c of (fixtures.companies ?? []) as Pax8Company[]) ds.putCompany(clone(c));
      for (const p of (fixtures.products ?? []) as Pax8Product[]) ds.putProduct(clone(p));
      // A fixture contact carries `companyId` only to say where it lives; Pax8 does not return it.
      for (const raw of (fixtures.contacts ?? []) as (Pax8Contact & { companyId: string })[]) {
        const { companyId, ...contact } = clone(raw);
        ds.putContact(companyId, contact);
      }
      for (const s of (fixtures.subscriptions ?? []) as Pax8Subscription[]) ds.putSubscription(clone(s));
      instances.set(instance, ds);
    },

    grow(instance, resource, count) {
      if (!isPax8Resource(resource)) throw new Error(`pax8: cannot grow ${resource}`);
      growDataset(dataset(instance), resource, count, clock.now());
    },

    reset() {
      instances.clear();
      windows.clear();
    },

    exportState(instance) {
      const ds = instances.get(instance);
      if (!ds) return undefined;
      // Pax8 ids are UUIDs: no counter to keep. The rate-limit window is the process's (not kept).
      const records = { companies: ds.companies, contacts: ds.contactsWithCompany(), products: ds.products, subscriptions: ds.subscriptions };
      return { records: clone(records) as Record<string, unknown[]>, issued: {}, extra: {}, clock: clock.lastStamp };
    },

    importState(instance, state) {
      sim.seed(instance, state.records);
      clock.continueAfter(state.clock);
    },

    get(instance, resource, id) {
      const ds = dataset(instance);
      const found: unknown =
        resource === 'companies' ? ds.company(id)
        : resource === 'contacts' ? ds.contact(id)?.contact
        : resource === 'products' ? ds.product(id)
        : ds.subscription(id);
      return found === undefined ? undefined : clone(found as Pax8Records[typeof resource]);
    },

    list(instance, resource, filter = {}) {
      const ds = dataset(instance);
      const want = filter.companyId;
      const all: unknown[] =
        resource === 'contacts' ? (want ? ds.contactsOf(want) : ds.allContacts())
        : resource === 'companies' ? ds.companies.filter((c) => !want || c.id === want)
        : resource === 'products' ? ds.products
        : ds.subscriptions.filter((s) => !want || s.companyId === want);
      return clone(all) as Pax8Records[typeof resource][];
    },

    companyOfContact(instance, contactId) {
      return dataset(instance).contact(contactId)?.companyId;
    },

    update(instance, resource, id, patch) {
      const ds = dataset(instance);
      const { id: _ignored, ...changes } = clone(patch) as Record<string, unknown>;
      const stamp = () => clock.now().toISOString();
      switch (resource) {
        case 'companies': {
          const c = need(ds.company(id), `company ${id}`);
          const address = { ...c.address, ...(changes.address as object | undefined) };
          Object.assign(c, changes, { address, updatedDate: stamp() });
          return clone(c) as Pax8Records[typeof resource];
        }
        case 'contacts': {
          const { contact } = need(ds.contact(id), `contact ${id}`);
          delete changes.companyId;
          Object.assign(contact, changes);
          return clone(contact) as Pax8Records[typeof resource];
        }
        case 'products': {
          const p = need(ds.product(id), `product ${id}`);
          Object.assign(p, changes);
          return clone(p) as Pax8Records[typeof resource];
        }
        default: {
          const s = need(ds.subscription(id), `subscription ${id}`);
          Object.assign(s, changes, { updatedDate: stamp() });
          return clone(s) as Pax8Records[typeof resource];
        }
      }
    },

    create(instance, resource, input) {
      const ds = dataset(instance);
      const now = clock.now().toISOString();
      switch (resource) {
        case 'companies': {
          const checked = checkCompany(input);
          if (!checked.ok) throw new Pax8InvalidRecordError(checked.details);
          return clone(ds.createCompany(checked.value)) as Pax8Records[typeof resource];
        }
        case 'contacts': {
          const { companyId, ...body } = input;
          need(typeof companyId === 'string' ? ds.company(companyId) : undefined, `company ${String(companyId)}`);
          const checked = checkContact(body);
          if (!checked.ok) throw new Pax8InvalidRecordError(checked.details);
          return clone(ds.createContact(companyId as string, checked.value)) as Pax8Records[typeof resource];
        }
        case 'products': {
          const product = { id: randomUUID(), ...clone(input) } as unknown as Pax8Product;
          ds.putProduct(product);
          return clone(product) as Pax8Records[typeof resource];
        }
        default: {
          const sub = {
            id: randomUUID(), createdDate: now, startDate: now, billingStart: now.slice(0, 10), status: 'Active',
            currencyCode: 'USD', billingTerm: 'Monthly', ...clone(input), updatedDate: now,
          } as unknown as Pax8Subscription;
          need(ds.company(sub.companyId), `company ${sub.companyId}`);
          ds.putSubscription(sub);
          return clone(sub) as Pax8Records[typeof resource];
        }
      }
    },
  };
  return sim;
}
