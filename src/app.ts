/** The HTTP surface: REST at the documented paths, /graphql for internal tooling, docs, operations. */
import { ApolloServer } from '@apollo/server';
import { expressMiddleware } from '@as-integrations/express5';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { GraphQLError, type GraphQLSchema } from 'graphql';
import { RequestValidationError } from './errors/request-validation-error';
import { ServiceError } from './errors/service-error';
import type { Caller } from './access/caller';
import type { GraphContext } from './graphql/context';
import { domainSchema } from './graphql/schema';
import { mountDocs } from './http/docs';
import { mountPageAssets } from './pages/assets';
import { pageHeadersOnEveryPage } from './pages/page-headers';
import { mountExplorer } from './graphql/explorer';
import { requestLogger } from './http/request-log';
import { requestSpans } from './telemetry/request-spans';
import { asDependencyError } from './http/dependency-errors';
import { workerHeartbeat } from './http/worker-heartbeat';
import { Metrics } from './http/metrics';
import { sendError, sendValidationError } from './errors/error-bodies';
import { buildOpenApi, openApiWithExamples } from './rest/openapi';
import { operationExamples } from './rest/examples';
import { sandboxExampleIds } from './rest/example-ids';
import { bindOperation, expressPath } from './rest/rest-adapter';
import { mountSimulators } from './simulators';
import type { Operation } from './operations/operation';
import type { Services } from './services';
import { allOperations, FEATURES } from './features';
import { databaseAnswers } from './http/readiness.store';

export interface BuiltApp {
  app: Express;
  apollo: ApolloServer<GraphContext>;
}

/** Whether every percent-escape of the path decodes to UTF-8 (Express would fail on its parameters). */
function decodablePath(path: string): boolean {
  if (!path.includes('%')) return true;
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

/** The error a resolver threw, through GraphQL's wrapping. */
function originalError(error: unknown): unknown {
  let e = error;
  while (e instanceof GraphQLError && e.originalError) e = e.originalError;
  return e;
}

/** `extra` mounts routes that are not part of the service (the benchmark's baseline handler). */
export async function buildApp(services: Services, extra?: (app: Express) => void): Promise<BuiltApp> {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  const metrics = new Metrics();
  const operations = allOperations();
  const schema = domainSchema(operations);

  mountRequestObservers(app, services, metrics, operations);
  // Simulators parse their own bodies the vendor's way; mount them before our parsers.
  if (services.simulators) mountSimulators(app, services.simulators);
  mountProbes(app, services, metrics);
  mountOpenApi(app, services, operations);
  mountDocs(app);
  mountPageAssets(app);
  mountBodyParsing(app, services);
  const apollo = await mountGraphql(app, services, schema);
  mountRest(app, services, operations);
  for (const f of FEATURES) f.mount?.(app, services, operations);
  extra?.(app);
  mountFallbacks(app, services, operations);
  return { app, apollo };
}

/** What watches every request: its log line, span, metrics and (with an ISV's key) its record, and the page headers. */
function mountRequestObservers(app: Express, services: Services, metrics: Metrics, operations: Operation[]): void {
  app.use(requestLogger(services.logger));
  // After the logger: the span carries the request id it assigned (src/telemetry).
  if (services.config.tracing) app.use(requestSpans());
  app.use(metrics.middleware());
  // Every request with an ISV's key, kept off the request's path (src/requests/recorder.ts; docs/architecture.md, Request log).
  app.use(services.requestRecorder.middleware(operations));
  // Every HTML answer refuses framing and inline script, whatever route wrote it (docs/architecture.md, Pages).
  app.use(pageHeadersOnEveryPage());
}

/** Liveness, readiness and the metrics scrape. */
function mountProbes(app: Express, services: Services, metrics: Metrics): void {
  const { config } = services;
  app.get('/healthz', (_req, res) => { res.json({ status: 'ok' }); });
  app.get('/readyz', async (_req, res) => {
    const [database, queue, beat] = await Promise.all([
      databaseAnswers(services.ds),
      services.queue.ping().catch(() => false),
      // Some worker took jobs lately (src/http/worker-heartbeat.ts); without one, jobs would just wait.
      workerHeartbeat(services.queue, config.workerHeartbeatStaleSeconds),
    ]);
    // With the sandbox on: seeded, reset after a restart and synced once by this start (server.ts).
    const sandbox = services.sandbox ? services.sandbox.ready : null;
    const worker = beat.fresh;
    const ready = database && queue && worker && sandbox !== false;
    const missing = Object.entries({ database, queue, worker, sandbox }).filter(([, ok]) => ok === false).map(([part]) => part);
    res.status(ready ? 200 : 503).json({
      status: ready ? 'ready' : 'not_ready', database, queue, worker, worker_heartbeat_age_seconds: beat.ageSeconds,
      ...(sandbox === null ? {} : { sandbox }),
      ...(missing.length ? { missing } : {}),
      ...(worker ? {} : { detail: `No worker has beaten within ${config.workerHeartbeatStaleSeconds} s: jobs (syncs, vendor writes, webhook deliveries) wait until a worker process (SERVICE_ROLE=worker or all) runs.` }),
    });
  });
  app.get('/metrics', async (_req, res) => {
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
}

/** The OpenAPI document, with examples that name the running sandbox's ids. */
function mountOpenApi(app: Express, services: Services, operations: Operation[]): void {
  let openapi: Record<string, unknown> | undefined;
  app.get('/openapi.json', async (_req, res) => {
    openapi ??= buildOpenApi(operations, services.config.publicUrl);
    // Examples name the running sandbox's ids as they are now (a pending charge, a ticket the ISV created),
    // so "Try it out" works on it as it stands.
    const ids = await sandboxExampleIds(services.sandbox ? services.ds : null);
    res.json(openApiWithExamples(openapi, operationExamples(ids)));
  });
}

/** Paths that cannot be decoded refused, then JSON bodies parsed (except MCP's). */
function mountBodyParsing(app: Express, services: Services): void {
  // A path that cannot be percent-decoded names nothing: authentication first (401 without a valid key,
  // 429 past the limits), then 404 `not_found`, never a 422 on a body it did not read.
  app.use(async (req: Request, res: Response, next: NextFunction) => {
    if (decodablePath(req.path)) return next();
    await services.authenticator.authenticate(req, res, { adminToken: req.path.startsWith('/graphql') });
    throw new ServiceError('not_found', 'Nothing of that id exists here: the path is not valid percent-encoded UTF-8.');
  });

  // MCP (POST /) reads its own body after authentication, so that bad JSON there is JSON-RPC's -32700.
  const json = express.json({ limit: '1mb', strict: false });
  app.use((req: Request, res: Response, next: NextFunction) => (req.path === '/' ? next() : json(req, res, next)));
}

/**
 * GraphQL: internal tooling with the admin token, or any API key; each field enforces its operation's
 * declared role and grant exactly as REST does (docs/architecture.md, Tenancy, keys and grants).
 */
async function mountGraphql(app: Express, services: Services, schema: GraphQLSchema): Promise<ApolloServer<GraphContext>> {
  const { config, logger } = services;
  const apollo = new ApolloServer<GraphContext>({
    schema,
    introspection: true,
    includeStacktraceInErrorResponses: config.graphqlStacktraces,
    formatError: (formatted, error) => {
      const e = originalError(error);
      if (e instanceof ServiceError) {
        return { ...formatted, message: e.message, extensions: { ...formatted.extensions, code: e.code, status: e.status, needed: e.extras.needed, details: e.extras.details, ...(e.extras.retryAfterSeconds != null ? { retry_after_seconds: Math.ceil(e.extras.retryAfterSeconds) } : {}) } };
      }
      if (e instanceof RequestValidationError) {
        return { ...formatted, message: e.message, extensions: { ...formatted.extensions, code: 'request_invalid', status: 422, detail: e.detail } };
      }
      // Anything else a resolver threw (a database error, a bug) is ours: logged, never shown.
      if (e instanceof Error && !(e instanceof GraphQLError)) {
        logger.error({ err: e }, 'graphql resolver error');
        return { message: 'Something went wrong on our side.', locations: formatted.locations, path: formatted.path, extensions: { code: 'internal', status: 500, ...(config.graphqlStacktraces ? { stacktrace: formatted.extensions?.stacktrace } : {}) } };
      }
      return formatted;
    },
  });
  await apollo.start();
  // A browser asking for a page gets GraphiQL (local assets only; it asks for the admin token or a key itself).
  mountExplorer(app);
  app.use('/graphql', services.authenticator.middleware({ adminToken: true }),
    expressMiddleware(apollo, { context: async ({ res }) => ({ caller: res.locals.caller as Caller, services }) }));
  return apollo;
}

/** REST: X-API-Key on every documented path, through the same authenticator (both limits). */
function mountRest(app: Express, services: Services, operations: Operation[]): void {
  const authenticate = services.authenticator.middleware();
  for (const op of operations) {
    if (op.http) app[op.http.method](expressPath(op.http.path), authenticate, bindOperation(op, services));
  }
}

/** After every route: 405 or 404 for what none took, and the error handler that answers every error. */
function mountFallbacks(app: Express, services: Services, operations: Operation[]): void {
  const { config } = services;
  // A known path with a method it does not take is 405 with Allow (docs/architecture.md, Errors), not 404.
  const routes = operations.filter((op) => op.http).map((op) => ({
    method: op.http!.method.toUpperCase(), regex: new RegExp(`^${op.http!.path.replace(/\{[^}]+\}/g, '[^/]+')}/?$`),
  }));
  app.use((req: Request, res: Response) => {
    const allow = [...new Set(routes.filter((r) => r.regex.test(req.path)).map((r) => r.method))];
    if (allow.length > 0) {
      return sendError(res, config.publicUrl, 'method_not_allowed', `${req.method} is not a method of ${req.path}; it takes ${allow.join(', ')}.`, { allow });
    }
    sendError(res, config.publicUrl, 'not_found', `No route ${req.method} ${req.path}.`);
  });
  app.use((thrown: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (res.headersSent) return;
    const err = asDependencyError(thrown); // the database or Redis gone: 503 with Retry-After, not 500
    if (err instanceof RequestValidationError) return sendValidationError(res, err);
    if (err instanceof ServiceError) return sendError(res, config.publicUrl, err.code, err.message, err.extras);
    const e = err as { type?: string; status?: number; message?: string };
    if (e?.type === 'entity.parse.failed') {
      return sendValidationError(res, new RequestValidationError([{ loc: ['body'], msg: 'JSON decode error', type: 'json_invalid' }]));
    }
    if (e?.type === 'entity.too.large') {
      return sendError(res, config.publicUrl, 'payload_too_large', 'The request body is over 1 MB; nothing was read.');
    }
    if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500) {
      return sendValidationError(res, new RequestValidationError([{ loc: ['body'], msg: e.message ?? 'Bad request', type: 'request_invalid' }]));
    }
    req.log?.error({ err }, 'unhandled error');
    sendError(res, config.publicUrl, 'internal', 'Something went wrong on our side; the request id identifies it in our logs.');
  });
}
