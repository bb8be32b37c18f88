/**
 * The four MCP tools (docs/architecture.md, MCP), generated from the operations that name a tool: three list
 * reads and route_finding. Each runs its operation through the shared runner with the caller the
 * request authenticated, so grants, tenant visibility and errors are REST's. Ticket create is
 * deliberately not offered over MCP.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import type { ZodObject, ZodType } from 'zod';
import type { Caller } from '../access/caller';
import { RequestValidationError } from '../errors/request-validation-error';
import { ServiceError } from '../errors/service-error';
import type { Operation } from '../operations/operation';
import { withAuditSurface } from '../audit/audit-context';
import { runOperation } from '../operations/runner';
import { API_VERSION } from '../rest/openapi';
import type { Services } from '../services';
import { selectableFields, summaryFields } from '../shared/field-selection';
import { itemsFieldOf } from '../shared/paging';
import { toPlainJson } from '../shared/raw-json';
import { PAGE_LIMIT, z } from '../shared/request';
import { INTERNAL_ERROR, toolError, toolSuccess } from './tool-result';
import { registerTenantsResource, type VisibleTenantList } from './tenants-resource';

/**
 * The page an agent gets when it names no `limit`: a default ticket page at the REST default is about
 * 285,000 characters (some 80,000 tokens); a sandbox ticket with its vendor `raw` is about 4,000, so 10
 * whole records stay under 50,000, and 10 in the default `summary` view under 8,000. The maximum is REST's.
 */
export const MCP_DEFAULT_LIMIT = 10;

const shapeOf = (s: ZodType | undefined): Record<string, ZodType> => ((s as ZodObject | undefined)?.shape ?? {}) as Record<string, ZodType>;

/** The operations offered as tools, in a stable order. */
export function toolOperations(operations: Operation[]): Operation[] {
  return operations.filter((op) => op.mcp);
}

/**
 * A parameter as a JSON client sends it: a query parameter that also takes the text of a URL (a
 * pipe from string or number to number) is just its output side here, so the tool's JSON Schema is exact.
 */
function jsonSide(schema: ZodType): ZodType {
  const d = (schema as any)._zod.def;
  if (d.type === 'default' && d.innerType._zod.def.type === 'pipe') return (d.innerType._zod.def.out as ZodType & { default(v: unknown): ZodType }).default(d.defaultValue);
  if (d.type === 'pipe') return d.out;
  return schema;
}

/** `limit` of a list tool: REST's bounds, the smaller MCP default. */
const toolLimit = () => z.number().int().min(PAGE_LIMIT.min).max(PAGE_LIMIT.max).default(MCP_DEFAULT_LIMIT)
  .describe(`Page size, ${PAGE_LIMIT.min} to ${PAGE_LIMIT.max} (default ${MCP_DEFAULT_LIMIT}, sized for an agent's context).`);

/** The field names a list tool's records can be narrowed to (undefined: the operation has no field selection). */
function fieldNamesOfTool(op: Operation): readonly string[] | undefined {
  const param = shapeOf(op.query).fields;
  return param ? selectableFields(param) : undefined;
}

/**
 * `fields` and `view` of a list tool. The MCP default is `summary`: a record's canonical fields without
 * the vendor payload (`raw` and `vendor`, the same payload twice, are some 85 % of a ticket), so a default
 * page fits an agent's context; `full` is REST's answer. `fields` (an array here, REST's comma list
 * there) narrows further and wins over `view`.
 */
function toolFieldArgs(names: readonly string[]) {
  return {
    fields: z.array(z.enum(names as [string, ...string[]])).min(1).max(names.length).optional()
      .describe('Only these fields of each record (id and source_id are always included).'),
    view: z.enum(['summary', 'full']).default('summary')
      .describe('summary (default): canonical fields only, no `raw` or `vendor` payload; full: the whole record, as REST answers it.'),
  };
}

/** A tool's input: the operation's path, query and body fields side by side. */
export function toolInput(op: Operation) {
  const names = fieldNamesOfTool(op);
  const query = Object.fromEntries(Object.entries(shapeOf(op.query)).filter(([k]) => !op.mcp?.omit?.includes(k) && k !== 'fields')
    .map(([k, v]) => [k, k === 'limit' ? toolLimit() : jsonSide(v)]));
  return z.object({ ...shapeOf(op.path), ...query, ...(names ? toolFieldArgs(names) : {}), ...shapeOf(op.body) }).strict();
}

/** The REST `fields=` value of a list tool's `fields`/`view` arguments (undefined: the whole record). */
function restFields(names: readonly string[], args: Record<string, unknown>): string | undefined {
  if (Array.isArray(args.fields)) return args.fields.join(',');
  return args.view === 'full' ? undefined : summaryFields(names).join(',');
}

/** The line a list tool's answer starts its text with: how many records and how big, so an agent can budget. */
function sizeLine(op: Operation, body: Record<string, unknown>, text: string): string {
  const field = op.http ? itemsFieldOf(op.http.path) : undefined;
  const items = field && Array.isArray(body[field]) ? (body[field] as unknown[]).length : 0;
  return `${items} ${field ?? 'items'}, ${text.length} characters${body.next_cursor ? '; pass cursor for more' : '; no further page'}.`;
}

/** What a tool's description adds to its operation's: the default page of a list tool. */
function toolDescription(op: Operation): string {
  const base = op.mcp!.description;
  const paged = 'limit' in shapeOf(op.query) ? ` Default page: ${MCP_DEFAULT_LIMIT} records (max ${PAGE_LIMIT.max}).` : '';
  const viewed = fieldNamesOfTool(op) ? ' Default view: summary (no vendor payload); view "full" adds `raw` and `vendor`, `fields` picks fields.' : '';
  return `${base}${paged}${viewed}`;
}

export interface ToolContext {
  services: Services;
  operations: Operation[];
  caller: Caller;
  log: Logger;
  /** The tenants the key sees, when this request needs them (initialize, the resource). */
  tenants: () => Promise<VisibleTenantList>;
  /** Server instructions, given only when the request is `initialize` (the one place a client reads them). */
  instructions?: string;
}

/**
 * The SDK checks arguments itself and answers a failure as plain text; the README promises the Error
 * envelope, so its check is kept to the element-count guard and the handler validates (toolFailure).
 */
function validateInHandler(server: McpServer): void {
  const inner = server as unknown as { validateToolInput(tool: object, args: unknown, name: string): Promise<unknown> };
  const sdkCheck = inner.validateToolInput.bind(server);
  inner.validateToolInput = async (tool, args, name) => {
    await sdkCheck({ ...tool, inputSchema: undefined }, args, name);
    return args ?? {};
  };
}

/** A fresh server per HTTP request (stateless transport): the caller is bound here, not looked up later. */
export function createMcpServer(ctx: ToolContext): McpServer {
  const server = new McpServer({ name: 'msp-integration-service', version: API_VERSION }, ctx.instructions ? { instructions: ctx.instructions } : {});
  validateInHandler(server);
  registerTenantsResource(server, ctx.tenants);
  for (const op of toolOperations(ctx.operations)) {
    const binding = op.mcp!;
    // A list tool's default view narrows its records: its output schema is the narrowed answer.
    const single = [...new Set(op.responses.map((r) => r.narrowed ?? r.schema))];
    const input = toolInput(op);
    const names = fieldNamesOfTool(op);
    server.registerTool(binding.tool, {
      title: binding.title,
      description: toolDescription(op),
      inputSchema: input,
      // A structured answer is checked against its schema by the SDK: only for operations with one answer shape.
      ...(single.length === 1 ? { outputSchema: single[0] as ZodObject } : {}),
      annotations: binding.readOnly
        ? { readOnlyHint: true, openWorldHint: false }
        : { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    }, async (raw: Record<string, unknown>) => {
      const parsed = input.safeParse(raw);
      if (!parsed.success) return toolFailure(new RequestValidationError(RequestValidationError.problems('arguments', parsed.error)), ctx);
      const args = parsed.data as Record<string, unknown>;
      const pick = (s: ZodType | undefined) => Object.fromEntries(Object.keys(shapeOf(s)).filter((k) => k in args).map((k) => [k, args[k]]));
      try {
        const query = pick(op.query);
        if (names) { delete query.fields; const fields = restFields(names, args); if (fields) query.fields = fields; }
        const result = await withAuditSurface('mcp', () => runOperation(op, { path: pick(op.path), query, body: op.body ? pick(op.body) : undefined }, ctx.caller, ctx.services));
        const body = toPlainJson<Record<string, unknown>>(result);
        if (!names) return toolSuccess(body);
        const answer = toolSuccess(body);
        const text = (answer.content[0] as { text: string }).text;
        return { ...answer, content: [...answer.content, { type: 'text', text: sizeLine(op, body, text) }] };
      } catch (err) {
        return toolFailure(err, ctx);
      }
    });
  }
  return server;
}

function toolFailure(err: unknown, ctx: ToolContext): CallToolResult {
  if (err instanceof ServiceError) return toolError(err, ctx.services.config.publicUrl);
  if (err instanceof RequestValidationError) {
    return toolError(new ServiceError('request_invalid', err.message, { details: { detail: err.detail } }), ctx.services.config.publicUrl);
  }
  ctx.log.error({ err }, 'MCP tool failed');
  return toolError(INTERNAL_ERROR, ctx.services.config.publicUrl);
}
