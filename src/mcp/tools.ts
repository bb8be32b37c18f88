/**
 * The four MCP tools (design.md section 9). Each runs the same graph operation as its REST route,
 * with the caller the request authenticated, so grants, tenant visibility and errors are REST's.
 * Ticket create is deliberately not offered over MCP.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { ServiceError } from '../errors/service-error';
import type { GraphExecutor } from '../graphql/executor';
import { API_VERSION } from '../rest/openapi';
import { listDocument, type ListOperation } from '../rest/operations';
import * as S from '../rest/schemas';
import { RouteFindingBody } from '../rest/write-schemas';
import type { Caller } from '../tenants/caller';
import { INTERNAL_ERROR, toolError, toolSuccess } from './tool-result';

const { z } = S;

export const MCP_TOOL_NAMES = ['list_tickets', 'list_devices', 'list_installed_applications', 'route_finding'] as const;

/** Input of the three list tools: REST's path and query of the list routes, minus updated_since. */
export const ListToolInput = z.object({
  tenant_id: S.uuid.describe('Tenant id, from GET /tenants.'),
  limit: z.number().int().min(1).max(500).default(100).describe('Page size, 1 to 500 (default 100).'),
  cursor: S.ListQuery.shape.cursor.describe('`next_cursor` of the previous page; omit for the first page.'),
}).strict();

export const RouteFindingToolInput = z.object({
  tenant_id: S.uuid.describe('Tenant id, from GET /tenants.'),
  ...RouteFindingBody.shape,
}).strict();

/** Not in mcpFeature.documents: the mutation belongs to the findings feature and is prepared on first use. */
export const ROUTE_FINDING = 'mutation RouteFinding($tenant_id: ID!, $body: JSONObject!) { route_finding(tenant_id: $tenant_id, body: $body) }';

const LIST_TOOLS: { name: (typeof MCP_TOOL_NAMES)[number]; op: ListOperation; output: typeof S.TicketList | typeof S.DeviceList | typeof S.ApplicationList; title: string; description: string }[] = [
  {
    name: 'list_tickets', op: 'tickets', output: S.TicketList, title: 'List tickets',
    description: 'One page of the tenant\'s PSA tickets (canonical status and priority, vendor payload in `raw`), '
      + 'served from the synchronised store; same answer as GET /tenants/{tenant_id}/tickets. Pass `next_cursor` as `cursor` for the next page.',
  },
  {
    name: 'list_devices', op: 'devices', output: S.DeviceList, title: 'List devices',
    description: 'One page of the tenant\'s RMM devices (hostname, company, OS, online, needs_attention, patches pending); '
      + 'same answer as GET /tenants/{tenant_id}/devices. Pass `next_cursor` as `cursor` for the next page.',
  },
  {
    name: 'list_installed_applications', op: 'applications', output: S.ApplicationList, title: 'List installed applications',
    description: 'One page of the software installed on the tenant\'s devices (name, publisher, version, device_source_id); '
      + 'same answer as GET /tenants/{tenant_id}/applications. Pass `next_cursor` as `cursor` for the next page.',
  },
];

export interface ToolContext {
  graph: GraphExecutor;
  caller: Caller;
  publicUrl: string;
  log: Logger;
}

/** A fresh server per HTTP request (stateless transport): the caller is bound here, not looked up later. */
export function createMcpServer(ctx: ToolContext): McpServer {
  const server = new McpServer({ name: 'msp-integration-service', version: API_VERSION });

  for (const tool of LIST_TOOLS) {
    const doc = listDocument(tool.op);
    server.registerTool(tool.name, {
      title: tool.title,
      description: tool.description,
      inputSchema: ListToolInput,
      outputSchema: tool.output,
      annotations: { readOnlyHint: true, openWorldHint: false },
    }, (args) => guarded(ctx, async () => {
      const data = await ctx.graph.run<{ page: Record<string, unknown> }>(doc, {
        tenant_id: args.tenant_id, limit: args.limit, cursor: args.cursor ?? null, updated_since: null,
      }, ctx.caller);
      return data.page;
    }));
  }

  server.registerTool('route_finding', {
    title: 'Route a finding',
    description: 'Routes a finding (technical or organizational) to a PSA service ticket or project for the tenant; '
      + 'same as POST /tenants/{tenant_id}/findings/route. `dry_run` defaults to true (a preview; nothing is written); '
      + 'pass dry_run: false to commit. `idempotency_key` is your stable finding id: a replay returns the original result.',
    inputSchema: RouteFindingToolInput,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  }, ({ tenant_id, ...body }) => guarded(ctx, async () => {
    const data = await ctx.graph.run<{ route_finding: Record<string, unknown> }>(ROUTE_FINDING, { tenant_id, body }, ctx.caller);
    return data.route_finding;
  }));

  return server;
}

async function guarded(ctx: ToolContext, run: () => Promise<Record<string, unknown>>): Promise<CallToolResult> {
  try {
    return toolSuccess(await run());
  } catch (err) {
    if (err instanceof ServiceError) return toolError(err, ctx.publicUrl);
    ctx.log.error({ err }, 'MCP tool failed');
    return toolError(INTERNAL_ERROR, ctx.publicUrl);
  }
}
