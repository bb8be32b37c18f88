/**
 * The four MCP tools (design.md section 9), generated from the operations that name a tool: three list
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
import { runOperation } from '../operations/runner';
import { API_VERSION } from '../rest/openapi';
import type { Services } from '../services';
import { toPlainJson } from '../shared/raw-json';
import { z } from '../shared/request';
import { INTERNAL_ERROR, toolError, toolSuccess } from './tool-result';

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

/** A tool's input: the operation's path, query and body fields side by side. */
export function toolInput(op: Operation) {
  const query = Object.fromEntries(Object.entries(shapeOf(op.query)).filter(([k]) => !op.mcp?.omit?.includes(k)).map(([k, v]) => [k, jsonSide(v)]));
  return z.object({ ...shapeOf(op.path), ...query, ...shapeOf(op.body) }).strict();
}

export interface ToolContext {
  services: Services;
  operations: Operation[];
  caller: Caller;
  log: Logger;
}

/** A fresh server per HTTP request (stateless transport): the caller is bound here, not looked up later. */
export function createMcpServer(ctx: ToolContext): McpServer {
  const server = new McpServer({ name: 'msp-integration-service', version: API_VERSION });
  for (const op of toolOperations(ctx.operations)) {
    const binding = op.mcp!;
    const single = [...new Set(op.responses.map((r) => r.schema))];
    server.registerTool(binding.tool, {
      title: binding.title,
      description: binding.description,
      inputSchema: toolInput(op),
      // A structured answer is checked against its schema by the SDK: only for operations with one answer shape.
      ...(single.length === 1 ? { outputSchema: single[0] as ZodObject } : {}),
      annotations: binding.readOnly
        ? { readOnlyHint: true, openWorldHint: false }
        : { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    }, async (args: Record<string, unknown>) => {
      const pick = (s: ZodType | undefined) => Object.fromEntries(Object.keys(shapeOf(s)).filter((k) => k in args).map((k) => [k, args[k]]));
      try {
        const result = await runOperation(op, { path: pick(op.path), query: pick(op.query), body: op.body ? pick(op.body) : undefined }, ctx.caller, ctx.services);
        return toolSuccess(toPlainJson<Record<string, unknown>>(result));
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
