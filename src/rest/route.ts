/**
 * A REST route is declared once: path, schemas, documented answers and the graph operation it runs.
 * The same declaration registers the Express handler (validation included) and the OpenAPI path.
 */
import type { Request, RequestHandler, Response } from 'express';
import type { ZodType } from 'zod';
import type { ErrorCode } from '../errors/error-codes';
import type { GraphExecutor } from '../graphql/executor';
import type { Caller } from '../tenants/caller';
import { RequestValidationError } from './http-errors';

export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  caller: Caller;
  graph: GraphExecutor;
  req: Request;
}

export interface RouteResult {
  status?: number;
  body?: unknown;
  /** The body as JSON text already (the read path builds it without a second serialisation). */
  json?: string;
  headers?: Record<string, string>;
}

export interface RouteDef<P = any, Q = any, B = any> {
  method: 'get' | 'post' | 'put' | 'delete';
  /** OpenAPI style: /tenants/{tenant_id}/tickets */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  params?: ZodType<P>;
  query?: ZodType<Q>;
  body?: ZodType<B>;
  response: { status: number; schema: ZodType; description: string };
  /** Error codes this route documents (besides unauthenticated and validation errors). */
  errors: ErrorCode[];
  /** Documented in the interface document (false: our addition). */
  documented: boolean;
  handle(input: RouteInput<P, Q, B>): Promise<RouteResult>;
}

export const defineRoute = <P, Q, B>(def: RouteDef<P, Q, B>): RouteDef<P, Q, B> => def;

export function expressPath(openApiPath: string): string {
  return openApiPath.replace(/\{([a-z_]+)\}/g, ':$1');
}

function parseOrThrow<T>(where: 'body' | 'query' | 'path', schema: ZodType<T> | undefined, value: unknown): T {
  if (!schema) return undefined as T;
  const r = schema.safeParse(value);
  if (!r.success) throw RequestValidationError.fromZod(where, r.error);
  return r.data;
}

export function bindRoute(def: RouteDef, graph: GraphExecutor): RequestHandler {
  return async (req: Request, res: Response) => {
    const caller = res.locals.caller as Caller;
    const params = parseOrThrow('path', def.params, req.params);
    const query = parseOrThrow('query', def.query, { ...(req.query as object) });
    let rawBody = req.body;
    if (def.body && (rawBody === undefined || (typeof rawBody === 'object' && rawBody !== null && Object.keys(rawBody).length === 0 && !req.headers['content-type']))) {
      rawBody = {};
    }
    const body = parseOrThrow('body', def.body, rawBody);
    const out = await def.handle({ params, query, body, caller, graph, req });
    for (const [k, v] of Object.entries(out.headers ?? {})) res.setHeader(k, v);
    res.status(out.status ?? def.response.status);
    if (out.json !== undefined) res.type('application/json').send(out.json);
    else res.json(out.body);
  };
}
