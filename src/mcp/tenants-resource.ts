/**
 * How an agent that has only MCP begins (docs/architecture.md, MCP): every tool needs a `tenant_id`, so the
 * tenants the key sees are a resource (the same answer as GET /tenants) and are named in the server's
 * instructions. A resource, not a fifth tool: the tools stay exactly the four of the interface document.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

export const TENANTS_RESOURCE_URI = 'tenants://visible';

export interface VisibleTenant {
  id: string;
  name: string;
  slug: string;
  sandbox: boolean;
  connections: { id: string; kind: string; connector: string }[];
}

/** The answer of GET /tenants, every page of it. */
export interface VisibleTenantList {
  tenants: VisibleTenant[];
  sandbox: boolean;
  next_cursor: string | null;
}

export function registerTenantsResource(server: McpServer, tenants: () => Promise<VisibleTenantList>): void {
  server.registerResource('tenants', TENANTS_RESOURCE_URI, {
    title: 'Tenants visible to this key',
    description: 'The tenants this API key may read, with their connections; use an `id` as `tenant_id` in every tool. Same answer as GET /tenants.',
    mimeType: 'application/json',
  }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(await tenants()) }],
  }));
}

/** The server's instructions: what the service is, the tenants by id, and the first call to make. */
export function instructionsFor(tenants: VisibleTenant[]): string {
  const listed = tenants.length
    ? tenants.map((t) => `- ${t.name} (tenant_id ${t.id}${t.sandbox ? ', sandbox' : ''}; ${t.connections.map((c) => `${c.kind} ${c.connector}`).join(', ') || 'no connections'})`).join('\n')
    : '- none: this key holds no grant on any tenant yet.';
  return [
    "MSP integration service: one canonical view of an MSP's PSA tickets, RMM devices and installed applications, and one write, route_finding.",
    'Every tool takes a tenant_id. The tenants this key sees:',
    listed,
    `The same list is the resource ${TENANTS_RESOURCE_URI}.`,
    'Begin with list_tickets or list_devices for a tenant_id above; pages are small by default; pass next_cursor as cursor for the next page.',
    'route_finding previews by default (dry_run true); pass dry_run false with your stable finding id as idempotency_key to write.',
    'Errors come back as the Error envelope (code, message, status, doc_url) with isError set.',
  ].join('\n');
}
