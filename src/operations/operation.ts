/**
 * An operation is declared once (docs/architecture.md, The picture): its input (path, query, body), its answers (one
 * schema per HTTP status), who may call it, and its handler. From this one declaration come the REST
 * route with its OpenAPI entry (src/rest), the typed GraphQL field (src/graphql) and, for the four that
 * name a tool, the MCP tool (src/mcp). Every surface calls `handle` through `runOperation`, with the same
 * caller and the same authorisation.
 *
 * A handler sees only the services its feature declares (`S`, an interface in the feature folder, e.g.
 * `TicketsServices`), never the whole service graph: this module does not know the graph, and
 * src/features.ts checks that the graph offers every feature what it declares (docs/architecture.md,
 * Adding things).
 */
import type { ZodObject, ZodType } from 'zod';
import type { Connection } from '../../entities';
import type { GrantNeed, OperationRole, TenantAccess } from '../access/access.service';
import type { Caller, GrantKey } from '../access/caller';
import type { ErrorCode } from '../errors/error-codes';

/** What a handler is given; `S` is the services its feature declares. */
export interface OperationContext<S = unknown> {
  caller: Caller;
  /** The services the operation's feature declares it uses (and only those, as far as its type says). */
  services: S;
  /**
   * The tenant named by the `tenant_id` path parameter, already checked for visibility (and, when the
   * operation declares a grant, carrying the connections it was checked on: `access.granted`).
   */
  access: TenantAccess | null;
  /** The connections the caller may act on under the operation's declared grant (empty when it declares none). */
  granted: readonly Connection[];
}

/**
 * How an operation declares the grant it needs (enforced by the runner through src/access):
 * - a key, or `{ key, kind }`: checked before the request body is read;
 * - `derivedGrant(cases, rule)`: a function of the valid input and the tenant, for a grant that depends on the target (a finding's
 *   routing target, a company create's fan-out); null: none applies and the handler answers the refusal
 *   (e.g. `distributor_required`);
 * - `'none'`: an ISV operation on the ISV's own configuration (its book, its routing, its webhooks),
 *   open to an ISV that sees the tenant; said explicitly, so that a forgotten grant fails a test.
 */
export type GrantRule<S = unknown> =
  | GrantKey
  | GrantNeed
  | 'none'
  | DerivedGrant<S>;

/** One grant a derived rule may ask for, and when: the reference states the rule from these (src/operations/grant-text.ts). */
export interface GrantCase {
  key: GrantKey;
  kind?: Connection['kind'];
  /** When this grant is the one needed, in words ("the finding's routing target is a project"). */
  when: string;
}

/**
 * A grant that depends on the input: the rule, and the cases it can answer as data. The cases are what
 * /openapi.json says (never the rule's source).
 */
export type DerivedGrant<S = unknown> =
  ((input: OperationInput<any, any, any>, ctx: { caller: Caller; access: TenantAccess; services: S }) => Promise<GrantNeed | null> | GrantNeed | null)
  & { readonly cases: readonly GrantCase[] };

/** A derived grant: `rule` may only answer one of `cases` (or null, when the handler answers the refusal). */
export function derivedGrant<S>(cases: readonly GrantCase[], rule: (input: OperationInput<any, any, any>, ctx: { caller: Caller; access: TenantAccess; services: S }) => Promise<GrantNeed | null> | GrantNeed | null): DerivedGrant<S> {
  // The rule is held to its cases, so what the reference says is what is enforced.
  const held = async (input: OperationInput<any, any, any>, ctx: { caller: Caller; access: TenantAccess; services: S }) => {
    const need = await rule(input, ctx);
    if (need && !cases.some((c) => c.key === need.key && (c.kind === undefined || c.kind === need.kind))) {
      throw new Error(`derived grant answered ${JSON.stringify(need)}, which none of its declared cases names`);
    }
    return need;
  };
  return Object.assign(held, { cases });
}

export interface OperationInput<P, Q, B> {
  path: P;
  query: Q;
  body: B;
}

export interface OperationResponse {
  status: number;
  schema: ZodType;
  description: string;
  /** The same answer narrowed by `fields=` (src/shared/field-selection.ts): documented beside `schema`, not a graph type. */
  narrowed?: ZodType;
}

export interface HttpBinding {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** OpenAPI style: /tenants/{tenant_id}/tickets */
  path: string;
  /** Listed in the interface document (false: our addition, said so in the OpenAPI description). */
  documented: boolean;
}

export interface McpBinding {
  tool: string;
  title: string;
  description: string;
  readOnly: boolean;
  /** Query parameters the tool does not take. */
  omit?: string[];
}

type Shape = ZodObject;

export interface Operation<P = any, Q = any, B = any, R = any, S = any> {
  /** GraphQL field name and OpenAPI operationId. */
  name: string;
  kind: 'query' | 'mutation';
  summary: string;
  description?: string;
  tag: string;
  /** Who may call it; the runner enforces exactly this on every surface. */
  role: OperationRole;
  /**
   * The grant it needs (or the rule deriving it from the target); the runner enforces it through
   * src/access and hands the handler the connections it holds the grant on. Every ISV write declares
   * one (`'none'` said explicitly); test/access-matrix.test.ts fails otherwise.
   */
  grant?: GrantRule<S>;
  http?: HttpBinding;
  mcp?: McpBinding;
  path?: Shape;
  query?: Shape;
  body?: ZodType;
  /** false: not in the graph (the 501 placeholders of paths whose feature is not built yet). */
  graph?: boolean;
  /** GraphQL: body fields become arguments of their own instead of one `input` argument. */
  flattenBody?: boolean;
  /** Every answer, by status. Several schemas make a GraphQL union. */
  responses: OperationResponse[];
  /** The code of a 404 for a path id that can name nothing (default not_found). */
  unknownPathId?: ErrorCode;
  /** Coded refusals this operation may answer (besides unauthenticated, not_found and request-schema 422). */
  errors: ErrorCode[];
  /** The HTTP status of a result (default: the first response's). */
  statusOf?(result: R): number;
  /**
   * A CSV form of the 200 answer, for `Accept: text/csv` or the query's `format=csv` (the query schema
   * declares `format`): REST runs the operation with `format: 'csv'` and answers `render(result)`.
   */
  csv?: { render(result: R): string; description: string };
  /** A property, not a method, so that its services are checked contravariantly (src/features.ts). */
  handle: (input: OperationInput<P, Q, B>, ctx: OperationContext<S>) => Promise<R>;
}

type Infer<T> = T extends ZodType<infer O> ? O : undefined;

/** An operation as its feature declares it: the types of `handle`'s input come from the schemas. */
export type OperationDeclaration<PS extends Shape | undefined, QS extends Shape | undefined, BS extends ZodType | undefined, R, S> =
  Omit<Operation, 'handle' | 'path' | 'query' | 'body' | 'statusOf' | 'grant' | 'csv'> & {
    path?: PS; query?: QS; body?: BS;
    grant?: GrantRule<S>;
    statusOf?(result: R): number;
    csv?: { render(result: R): string; description: string };
    handle(input: OperationInput<Infer<PS>, Infer<QS>, Infer<BS>>, ctx: OperationContext<S>): Promise<R>;
  };

/**
 * The `defineOperation` of a feature whose handlers use the services `S`, the interface its folder declares
 * (`const defineOperation = operationsUsing<TicketsServices>()` at the top of its feature.ts).
 */
export function operationsUsing<S>() {
  return <PS extends Shape | undefined = undefined, QS extends Shape | undefined = undefined, BS extends ZodType | undefined = undefined, R = unknown>(
    op: OperationDeclaration<PS, QS, BS, R, S>,
  ): Operation<Infer<PS>, Infer<QS>, Infer<BS>, R, S> => op as unknown as Operation<Infer<PS>, Infer<QS>, Infer<BS>, R, S>;
}

/** Declares an operation whose handler uses no service (a refusal, a fixed answer). */
export const defineOperation = operationsUsing<unknown>();

/** The tenant access of a tenant-scoped operation (its path has `tenant_id`). */
export function tenantOf(ctx: { access: TenantAccess | null }): TenantAccess {
  if (!ctx.access) throw new Error('operation is not tenant-scoped');
  return ctx.access;
}
