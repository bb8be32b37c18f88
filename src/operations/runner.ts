/**
 * How every surface runs an operation: the tenant's visibility first (an invisible tenant is 404 for
 * anyone, whatever else is wrong with the request), then the caller's role, then the declared grant
 * when it is fixed, then the request schemas (every problem reported at once), then a grant that depends
 * on the input, then the handler with the connections the caller may act on. All of it is asked of
 * src/access; the handler decides none of it.
 */
import type { ZodType } from 'zod';
import { requireRole, staticNeed, type TenantAccess } from '../access/access.service';
import { isAdminCaller, type Caller } from '../access/caller';
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
  // that names nothing visible (docs/architecture.md, Reads), before it reaches a query.
  for (const v of Object.values(path ?? {})) {
    if (typeof v === 'string' && (v.length > 1000 || !isSafeText(v))) throw new ServiceError(op.unknownPathId ?? 'not_found', 'Nothing of that id exists here.');
  }
  const tenantId = path?.tenant_id;
  let access: TenantAccess | null = typeof tenantId === 'string' ? await services.access.tenantAccess(caller, tenantId) : null;
  requireRole(caller, op.role, op.kind);
  const fixed = staticNeed(op.grant);
  if (op.grant !== undefined && op.grant !== 'none' && !access) throw new Error(`operation ${op.name} declares a grant but is not tenant-scoped`);
  if (fixed && access) access = services.access.grantedFor(access, fixed);
  const input: OperationInput<unknown, unknown, unknown> = {
    path,
    query: parsePart('query', op.query, raw.query, problems),
    body: parsePart('body', op.body, raw.body, problems),
  };
  if (problems.length) throw new RequestValidationError(problems);
  if (typeof op.grant === 'function' && access) {
    const need = await op.grant(input, { caller, access, services });
    if (need) access = services.access.grantedFor(access, need);
  }
  // Support looked: an admin read of a tenant's data is in that tenant's audit log (its own tooling's reads are not).
  if (isAdminCaller(caller) && op.kind === 'query' && op.role !== 'admin' && access) {
    await services.audit.write({ tenantId: access.tenant.id, action: 'admin.read', outcome: 'ok', subjectRef: op.name, detail: { operation: op.name, by: 'admin' } });
  }
  return op.handle(input, { caller, services, access, granted: access?.granted?.connections ?? [] });
}
