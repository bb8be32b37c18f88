/**
 * The root span of each HTTP request (SERVER kind), named after its route template once routing has
 * found it (`POST /tenants/:tenant_id/tickets`), with the request id pino-http gave it. Everything the
 * request does after this middleware runs in its context: the request's emitters are bound to it, so the
 * body parser's callbacks (and so the handlers after them) keep it too. The sandbox's calls to its own
 * simulators and the health and metrics probes get no span: they would be traces of their own, noise.
 */
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { NextFunction, Request, Response } from 'express';
import { isInternalRequest } from '../http/request-log';
import { routeLabel } from '../http/metrics';
import { withScope } from './scope';
import { tracer } from './spans';

const UNTRACED = new Set(['/healthz', '/readyz', '/metrics']);
/** Surfaces mounted whole rather than as routes: their path is their route. */
const MOUNTED = new Set(['/graphql', '/']);

/** The route template, or for a mounted surface its path; `unmatched` for anything else routing did not find. */
function routeOf(req: Request): string {
  const label = routeLabel(req);
  const path = (req.originalUrl ?? req.url).split('?')[0];
  return label === 'unmatched' && MOUNTED.has(path) ? path : label;
}

export function requestSpans() {
  return (req: Request, res: Response, next: NextFunction) => {
    if (UNTRACED.has(req.path) || isInternalRequest(req)) return next();
    const requestId = typeof (req as { id?: unknown }).id === 'string' ? (req as { id?: string }).id : undefined;
    const parent = withScope(context.active(), { requestId });
    const span = tracer().startSpan(req.method, {
      kind: SpanKind.SERVER,
      attributes: { 'http.request.method': req.method },
    }, parent);
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      const route = routeOf(req);
      span.updateName(`${req.method} ${route}`);
      span.setAttribute('http.route', route);
      const tenantId = req.params?.tenant_id;
      if (typeof tenantId === 'string' && tenantId.length <= 100) span.setAttribute('msp.tenant_id', tenantId);
      if (res.headersSent) span.setAttribute('http.response.status_code', res.statusCode);
      if (!res.writableFinished) span.setAttribute('error.type', 'connection_closed');
      if (res.statusCode >= 500 || !res.writableFinished) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    };
    res.once('finish', end);
    res.once('close', end);
    const ctx = trace.setSpan(parent, span);
    context.bind(ctx, req);
    context.bind(ctx, res);
    context.with(ctx, next);
  };
}
