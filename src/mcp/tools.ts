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
import { withAuditSurface } from '../operations/audit-context';
import { runOperation, type RunnerServices } from '../operations/runner';
import { API_VERSION } from '../rest/openapi';
import type { RequestAuthenticator } from '../access/authenticator';
import type { AppConfig } from '../config/config';
import { selectableFields, summaryFields } from '../shared/field-selection';
import { itemsFieldOf } from '../shared/paging';
import { toPlainJson } from '../shared/raw-json';
import { PAGE_LIMIT, z } from '../shared/request';
import { INTERNAL_ERROR, toolError, toolSuccess } from './tool-result';
import { budgetChars, recordsThatFit } from './answer-budget';
import { registerTenantsResource, type VisibleTenantList } from './tenants-resource';

/**
 * The page an agent gets when it names no `limit`: a default ticket page at the REST default is about
 * 285,000 characters (some 80,000 tokens); a sandbox ticket with its vendor `raw` is about 4,000, so 10
 * whole records stay under 50,000, and 10 in the default `summary` view under 8,000. The maximum is REST's.
 */
export const MCP_DEFAULT_LIMIT = 10;

const shapeOf = (s: ZodType | undefined): Record<string, ZodType> => ((s as ZodObject | undefined)?.shape ?? {}) as Record<string, ZodType>;

/** The operations offered as tools, in a stable order (by tool name), whatever order the features declare them in. */
export function toolOperations(operations: Operation[]): Operation[] {
  return operations.filter((op) => op.mcp).sort((a, b) => (a.mcp!.tool < b.mcp!.tool ? -1 : a.mcp!.tool > b.mcp!.tool ? 1 : 0));
}

/**
 * A tool's output schema. The SDK lists and checks only object schemas; an operation with more than one
 * answer shape (a write's preview and its commit) gets an object schema that accepts exactly one of
 * them: listed as JSON Schema `anyOf` the shapes, checked by parsing with their union.
 */
export function toolOutputSchema(op: Operation): ZodObject {
  // A list tool's default view narrows its records: its output schema is the narrowed answer.
  const shapes = [...new Set(op.responses.map((r) => r.narrowed ?? r.schema))];
  if (shapes.length === 1) return shapes[0] as ZodObject;
  const union = z.union(shapes as [ZodType, ZodType, ...ZodType[]]);
  const listed = z.toJSONSchema(union, { io: 'output', target: 'draft-7', unrepresentable: 'any' }) as Record<string, unknown>;
  const { $schema: _ignored, ...oneOfThem } = listed;
  return z.object({}).catchall(z.unknown()).superRefine((value, ctx) => {
    const parsed = union.safeParse(value);
    if (!parsed.success) for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, code: 'custom', message: issue.message });
  }).meta(oneOfThem) as unknown as ZodObject;
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
function sizeLine(field: string, body: Record<string, unknown>, text: string, shrunkFrom: number | null, budget: number): string {
  const items = Array.isArray(body[field]) ? (body[field] as unknown[]).length : 0;
  const shrunk = shrunkFrom === null ? '' : `; ${shrunkFrom} asked, cut to whole records within the answer budget of ${budget} characters`;
  return `${items} ${field}, ${text.length} characters${shrunk}${body.next_cursor ? '; pass cursor for more' : '; no further page'}.`;
}

/** Room kept in the budget for the size line; a next_cursor the smaller page gains is caught by measuring it again. */
const LINE_RESERVE = 300;
/** Re-runs of a page to fit the budget: each keeps fewer records than the last, so a few always do. */
const FIT_TRIES = 6;

/**
 * A list tool's page within the answer budget (answer-budget.ts): run as asked, then, while its text is
 * over the budget, again with a `limit` of the whole records that fit, from the same cursor, so its
 * `next_cursor` carries on after the last record kept. A first record alone over the budget is a
 * request_invalid tool error pointing to the smaller views.
 */
async function pageWithinBudget(
  field: string, query: Record<string, unknown>, run: (query: Record<string, unknown>) => Promise<unknown>, budget: number,
): Promise<{ body: Record<string, unknown>; shrunkFrom: number | null }> {
  let body = toPlainJson<Record<string, unknown>>(await run(query));
  const asked = Number(query.limit);
  let shrunk = false;
  for (let tries = 0; tries < FIT_TRIES; tries++) {
    const text = JSON.stringify(body);
    const items = Array.isArray(body[field]) ? (body[field] as unknown[]) : [];
    if (text.length + LINE_RESERVE <= budget || !items.length) return { body, shrunkFrom: shrunk ? asked : null };
    const recordChars = items.map((item) => JSON.stringify(item).length);
    const fit = recordsThatFit(text.length, recordChars, budget, LINE_RESERVE);
    if (fit === 0) {
      throw new ServiceError('request_invalid',
        `The next record is ${recordChars[0]} characters: with its page, over this server's answer budget of ${budget} characters (MCP_ANSWER_BUDGET_TOKENS); `
        + 'ask for it with view "summary" or a few `fields`.', { details: { record_chars: recordChars[0], budget_chars: budget } });
    }
    shrunk = true;
    body = toPlainJson<Record<string, unknown>>(await run({ ...query, limit: fit }));
  }
  throw new ServiceError('internal', 'The page did not fit the answer budget.');
}

/** What a tool's description adds to its operation's: the default page of a list tool. */
function toolDescription(op: Operation): string {
  const base = op.mcp!.description;
  const paged = 'limit' in shapeOf(op.query) ? ` Default page: ${MCP_DEFAULT_LIMIT} records (max ${PAGE_LIMIT.max}).` : '';
  const viewed = fieldNamesOfTool(op) ? ' Default view: summary (no vendor payload); view "full" adds `raw` and `vendor`, `fields` picks fields.' : '';
  return `${base}${paged}${viewed}`;
}

/** What the MCP surface itself uses of the service graph; the runner hands the graph on to each operation. */
export interface McpServices extends RunnerServices {
  config: Pick<AppConfig, 'publicUrl' | 'mcpMaxAnswerBytes' | 'mcpAnswerBudgetTokens'>;
  authenticator: Pick<RequestAuthenticator, 'authenticate'>;
  logger: Logger;
}

export interface ToolContext {
  services: McpServices;
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
    const input = toolInput(op);
    const names = fieldNamesOfTool(op);
    server.registerTool(binding.tool, {
      title: binding.title,
      description: toolDescription(op),
      inputSchema: input,
      // Every structured answer is checked against it by the SDK before it is sent.
      outputSchema: toolOutputSchema(op),
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
        const run = (q: Record<string, unknown>) => withAuditSurface('mcp',
          () => runOperation(op, { path: pick(op.path), query: q, body: op.body ? pick(op.body) : undefined }, ctx.caller, ctx.services));
        const field = 'limit' in query && op.http ? itemsFieldOf(op.http.path) : undefined;
        // Not a page (a write, committed or previewed): answered whole, since its outcome must not be cut.
        if (!field) return toolSuccess(toPlainJson<Record<string, unknown>>(await run(query)));
        const budget = budgetChars(ctx.services.config.mcpAnswerBudgetTokens);
        const { body, shrunkFrom } = await pageWithinBudget(field, query, run, budget);
        const answer = toolSuccess(body);
        const text = (answer.content[0] as { text: string }).text;
        return { ...answer, content: [...answer.content, { type: 'text', text: sizeLine(field, body, text, shrunkFrom, budget) }] };
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
