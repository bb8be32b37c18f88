/**
 * REST owns only HTTP: it binds each operation that has an HTTP binding to its path, reads path, query
 * and body (and the `Idempotency-Key` header), runs the operation through the shared runner and writes
 * the answer with the status its result type says. The Error envelope is written by app.ts's handler.
 */
import type { Request, RequestHandler, Response } from 'express';
import type { Caller } from '../access/caller';
import { RequestValidationError } from '../errors/request-validation-error';
import type { Operation } from '../operations/operation';
import { withAuditSurface } from '../operations/audit-context';
import { runOperation, type RunnerServices } from '../operations/runner';
import { toJsonBuffer } from '../shared/raw-json';

export function expressPath(openApiPath: string): string {
  return openApiPath.replace(/\{([a-z_]+)\}/g, ':$1');
}

function takesIdempotencyKey(op: Operation): boolean {
  const shape = (op.body as { shape?: Record<string, unknown> } | undefined)?.shape;
  return Boolean(shape && 'idempotency_key' in shape);
}

/** The body, with the `Idempotency-Key` header as the same value as `idempotency_key` (both and different: 422). */
function bodyOf(op: Operation, req: Request): unknown {
  let body: unknown = req.body;
  if (op.body && (body === undefined || (isObject(body) && Object.keys(body).length === 0 && !req.headers['content-type']))) body = {};
  const header = req.header('idempotency-key');
  if (header !== undefined && takesIdempotencyKey(op) && isObject(body)) {
    const given = body.idempotency_key;
    if (given != null && given !== header) {
      throw new RequestValidationError([{ loc: ['header', 'Idempotency-Key'], msg: 'differs from body.idempotency_key', type: 'value_error' }]);
    }
    body = { ...body, idempotency_key: header };
  }
  return body;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function bindOperation(op: Operation, services: RunnerServices): RequestHandler {
  return async (req: Request, res: Response) => {
    const caller = res.locals.caller as Caller;
    const query: Record<string, unknown> = { ...(req.query as object) };
    // CSV when asked for by the query, or by an Accept that prefers it to JSON.
    const csv = op.csv && (query.format === 'csv' || (query.format === undefined && req.headers.accept?.includes('text/csv') && req.accepts(['application/json', 'text/csv']) === 'text/csv'));
    if (csv) query.format = 'csv';
    const result = await withAuditSurface('api', () => runOperation(op, { path: { ...req.params }, query, body: op.body ? bodyOf(op, req) : undefined }, caller, services));
    const status = op.statusOf ? op.statusOf(result) : op.responses[0].status;
    if (csv && op.csv) {
      res.status(status).type('text/csv; charset=utf-8').send(op.csv.render(result));
      return;
    }
    if (isObject(result) && result.idempotent_replay === true) res.setHeader('Idempotent-Replay', 'true');
    res.status(status);
    if (status === 204) { res.end(); return; }
    res.type('application/json').send(toJsonBuffer(result));
  };
}
