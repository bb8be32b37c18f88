/**
 * How every surface runs an operation: the tenant's visibility first (an invisible tenant is 404 for
 * anyone, whatever else is wrong with the request), then the caller's role, then the declared grant
 * when it is fixed, then the request schemas (every problem reported at once), then a grant that depends
 * on the input, then the handler with the connections the caller may act on. All of it is asked of
 * src/access; the handler decides none of it.
 */
import type { ZodType } from 'zod';
import { requireRole, staticNeed, type AccessService, type TenantAccess } from '../access/access.service';
import { actorOf, isAdminCaller, principalOf, type Caller } from '../access/caller';
import { RequestValidationError, type ValidationProblem } from '../errors/request-validation-error';
import { ServiceError } from '../errors/service-error';
import { asDependencyError } from '../http/dependency-errors';
import { withCursorBinding, type CursorBinding } from '../shared/paging';
import { isSafeText } from '../shared/request';
import type { SecretBox } from '../security/secret-box';
import { withAuditActor } from './audit-context';
import type { Operation, OperationInput } from './operation';
import { context } from '@opentelemetry/api';
import { withScope } from '../telemetry/scope';
import { inSpan } from '../telemetry/spans';

/**
 * What the runner itself asks of the service graph. The services it is given go on, whole, to the
 * operation's grant rule and handler, which see them through their feature's own interface.
 */
export interface RunnerServices {
  access: Pick<AccessService, 'tenantAccess' | 'grantedFor'>;
  /** An admin's read of a tenant's data is written to that tenant's audit log (AuditService.write). */
  audit: { write(entry: { tenantId: string; action: string; outcome: 'ok'; subjectRef: string; detail: Record<string, unknown> }): Promise<void> };
  box: Pick<SecretBox, 'digest'>;
}

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

export async function runOperation<R>(op: Operation<any, any, any, R>, raw: RawInput, caller: Caller, services: RunnerServices): Promise<R> {
  // A database or Redis that went away is 503 service_unavailable on every surface (src/http/dependency-errors.ts).
  // Every audit entry the operation writes names its caller as actor (src/operations/audit-context.ts).
  return withAuditActor(actorOf(caller), () =>
    inOperationSpan(op, raw, () => run(op, raw, caller, services).catch((err: unknown) => { throw asDependencyError(err); })));
}

/** Every surface's run of an operation is one span (src/telemetry): its name and tenant are its attributes. */
function inOperationSpan<R>(op: Operation<any, any, any, R>, raw: RawInput, fn: () => Promise<R>): Promise<R> {
  const given = (raw.path as { tenant_id?: unknown } | undefined)?.tenant_id;
  const tenantId = typeof given === 'string' && given.length <= 100 && isSafeText(given) ? given : undefined;
  return inSpan(`operation ${op.name}`, { parent: withScope(context.active(), { tenantId }), attributes: { 'msp.operation': op.name } }, fn);
}

async function run<R>(op: Operation<any, any, any, R>, raw: RawInput, caller: Caller, services: RunnerServices): Promise<R> {
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
  // The cursors this call reads (in its query schema) and issues (in its handler) are bound to it (src/shared/paging.ts).
  const cursors = cursorBinding(op, path, access, caller, services);
  const input: OperationInput<unknown, unknown, unknown> = withCursorBinding(cursors, () => ({
    path,
    query: parsePart('query', op.query, raw.query, problems),
    body: parsePart('body', op.body, raw.body, problems),
  }));
  if (problems.length) throw new RequestValidationError(problems);
  if (typeof op.grant === 'function' && access) {
    const need = await op.grant(input, { caller, access, services });
    if (need) access = services.access.grantedFor(access, need);
  }
  // Support looked: an admin read of a tenant's data is in that tenant's audit log (its own tooling's reads are not).
  if (isAdminCaller(caller) && op.kind === 'query' && op.role !== 'admin' && access) {
    await services.audit.write({ tenantId: access.tenant.id, action: 'admin.read', outcome: 'ok', subjectRef: op.name, detail: { operation: op.name, by: 'admin' } });
  }
  return withCursorBinding(cursors, () => op.handle(input, { caller, services, access, granted: access?.granted?.connections ?? [] }));
}

/** A cursor belongs to this operation with its path (the tenant apart), the tenant, and the caller. */
function cursorBinding(op: Operation<any, any, any, unknown>, path: Record<string, unknown> | undefined, access: TenantAccess | null, caller: Caller, services: RunnerServices): CursorBinding {
  const { tenant_id: _tenant, ...rest } = path ?? {};
  return {
    list: JSON.stringify([op.name, rest]),
    tenant: access?.tenant.id ?? '',
    caller: principalOf(caller),
    seal: (text) => services.box.digest('cursor', text),
  };
}
