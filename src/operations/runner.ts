/**
 * How every surface runs an operation: the tenant's visibility first (an invisible tenant is 404 for
 * anyone, whatever else is wrong with the request), then the caller's role, then the request schemas
 * (every problem reported at once), then the handler.
 */
import type { ZodType } from 'zod';
import { requireRole } from '../access/access.service';
import type { Caller } from '../access/caller';
import { RequestValidationError, type ValidationProblem } from '../errors/request-validation-error';
import { ServiceError } from '../errors/service-error';
import { isSafeText } from '../shared/request';
import type { Services } from '../services';
import type { Operation, OperationInput } from './operation';

export interface RawInput {
  path?: unknown;
  query?: unknown;
  body?: unknown;
}

function parsePart(where: string, schema: ZodType | undefined, value: unknown, problems: ValidationProblem[]): unknown {
  if (!schema) return undefined;
  const r = schema.safeParse(value ?? {});
  if (r.success) return r.data;
  problems.push(...RequestValidationError.problems(where, r.error));
  return undefined;
}

export async function runOperation<R>(op: Operation<any, any, any, R>, raw: RawInput, caller: Caller, services: Services): Promise<R> {
  const problems: ValidationProblem[] = [];
  const path = parsePart('path', op.path, raw.path, problems) as Record<string, unknown> | undefined;
  // A path id the store cannot hold (NUL, a lone surrogate, absurd length) names nothing: 404, as any id
  // that names nothing visible (design.md section 5), before it reaches a query.
  for (const v of Object.values(path ?? {})) {
    if (typeof v === 'string' && (v.length > 1000 || !isSafeText(v))) throw new ServiceError(op.unknownPathId ?? 'not_found', 'Nothing of that id exists here.');
  }
  const tenantId = path?.tenant_id;
  const access = typeof tenantId === 'string' ? await services.access.tenantAccess(caller, tenantId) : null;
  requireRole(caller, op.role);
  const input: OperationInput<unknown, unknown, unknown> = {
    path,
    query: parsePart('query', op.query, raw.query, problems),
    body: parsePart('body', op.body, raw.body, problems),
  };
  if (problems.length) throw new RequestValidationError(problems);
  return op.handle(input, { caller, services, access });
}

/** The tenant access of a tenant-scoped operation (its path has `tenant_id`). */
export function tenantOf(ctx: { access: import('../access/access.service').TenantAccess | null }) {
  if (!ctx.access) throw new Error('operation is not tenant-scoped');
  return ctx.access;
}
